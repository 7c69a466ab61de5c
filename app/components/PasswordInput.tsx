"use client";

import { useT } from "./Messages";
import { useState, type ComponentProps, type Ref } from "react";
import { Field, type FieldAria } from "./Field";

type Props = Omit<ComponentProps<"input">, "type" | "ref"> & {
  id: string;
  inputRef: Ref<HTMLInputElement>;
  /** The toggle needs JavaScript: shown once the form is the component's. */
  toggle: boolean;
  /** Bumped by the form on submit: the password is hidden again before it goes anywhere. */
  hideKey: number;
};

/**
 * A password input with a show/hide toggle: a real button whose name stays "Show password" and
 * whose state is aria-pressed, pointing at the input it controls.
 */
export function PasswordInput({ id, inputRef, toggle, hideKey, ...input }: Props) {
  const t = useT();
  const [shown, setShown] = useState<{ on: boolean; key: number }>({ on: false, key: hideKey });
  const visible = shown.on && shown.key === hideKey;
  return (
    <div className="password-row">
      <input {...input} id={id} ref={inputRef} type={visible ? "text" : "password"} />
      {toggle ? (
        <button
          type="button"
          className="toggle"
          aria-pressed={visible}
          aria-controls={id}
          onClick={() => setShown({ on: !visible, key: hideKey })}
        >
          {t("forms.show")}
          <span className="sr-only">{t("forms.showPassword")}</span>
        </button>
      ) : null}
    </div>
  );
}

/** A labelled password field (./Field) with its show/hide toggle: the hint and the error are the input's description. */
export function PasswordField({
  label,
  hint,
  error,
  ...input
}: Omit<Props, keyof FieldAria> & { label: string; hint?: string; error?: string }) {
  return (
    <Field id={input.id} label={label} hint={hint} error={error}>
      {(aria) => <PasswordInput {...input} {...aria} />}
    </Field>
  );
}

"use client";

import { useRef, useState } from "react";
import { Field } from "../components/Field";
import { handled } from "../components/handled";
import type { EMAIL_CHANGE_WORDS } from "./action-words";
import { FreshActionPrompts, type ActionProps } from "./FreshPostForm";
import { postForm, useFreshAction } from "./useFreshAction";

const ACTION = "/api/account/email";

/**
 * "Change email": the button opens the form with "New email"; sending it asks "Confirm it's you"
 * in place when the server wants a fresh authentication. The answer is the same whether the address
 * is free or another account's: check that inbox. Without JavaScript, a plain form post.
 */
export function ChangeEmail({ formToken, email, ways, words }: ActionProps<typeof EMAIL_CHANGE_WORDS>) {
  const action = useFreshAction();
  const { pending, freshly } = action;
  const [open, setOpen] = useState(false);
  const [newEmail, setNewEmail] = useState("");
  const [missing, setMissing] = useState(false);
  const [sentTo, setSentTo] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  if (!open) {
    return (
      <>
        {sentTo ? (
          <p className="banner ok" role="status" data-testid="email-change-sent">
            {words.sent.replace("{email}", sentTo)}
          </p>
        ) : null}
        <button
          type="button"
          className="secondary"
          onClick={() => {
            setOpen(true);
            setSentTo(null);
            // Focus lands in the field the button opened.
            setTimeout(() => input.current?.focus(), 0);
          }}
        >
          {words.open}
        </button>
      </>
    );
  }
  return (
    <>
      <FreshActionPrompts action={action} formToken={formToken} email={email} ways={ways} testId="email-change-error" />
      <form
        method="post"
        action={ACTION}
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          if (pending) return;
          const typed = newEmail.trim();
          setMissing(typed === "");
          if (typed === "") return input.current?.focus();
          handled(
            freshly(
              words.reason,
              () => postForm(ACTION, { formToken, newEmail: typed, json: "true" }),
              () => {
                setSentTo(typed);
                setNewEmail("");
                setOpen(false);
              },
            ),
          );
        }}
      >
        <input type="hidden" name="formToken" value={formToken} />
        <Field id="new-email" label={words.label} hint={words.labelHint} error={missing ? words.enterEmail : undefined}>
          {(aria) => (
            <input
              ref={input}
              id="new-email"
              name="newEmail"
              type="email"
              autoComplete="email"
              spellCheck={false}
              required
              value={newEmail}
              onChange={(event) => setNewEmail(event.target.value)}
              {...aria}
            />
          )}
        </Field>
        <button type="submit" className="primary" aria-disabled={pending ? true : undefined}>
          {pending ? words.pending : words.submit}
        </button>{" "}
        <button type="button" className="secondary" onClick={() => setOpen(false)}>
          {words.cancel}
        </button>
      </form>
    </>
  );
}

"use client";

import { useT } from "../components/Messages";
import { useRouter } from "next/navigation";
import { useRef, useState } from "react";
import { useHydrated } from "../components/hydrated";
import { flushSync } from "react-dom";
import { PASSWORD_LIMITS, checkNewPassword } from "@/lib/ui/password-checks";
import { AltchaField, type AltchaHandle } from "../components/AltchaField";
import { PasswordField } from "../components/PasswordInput";
import { PasswordStrength } from "../components/PasswordStrength";
import { useGuardedSubmit, type Send } from "../components/guarded-submit";
import { RefusalBanner, refusalFrom } from "../components/RefusalBanner";
import { ConfirmItsYou, type ConfirmWays } from "./ConfirmItsYou";

/** `set`: "Set a password" on an account started with a passkey (no current one; a fresh passkey proof instead). */
type Props = { formToken: string; email: string; minLength: number; ways: ConfirmWays; mode?: "change" | "set" };
type Errors = Partial<Record<"currentPassword" | "newPassword", string>>;

/**
 * Change password. The proof of work (ALTCHA) needs JavaScript, as on the sign-in page; the form
 * still posts (never GET), so a submit before hydration cannot put a password in a URL.
 */
export function ChangePasswordForm({ formToken, email, minLength, ways, mode = "change" }: Props) {
  const setting = mode === "set";
  const action = setting ? "/api/account/password/set" : "/api/account/password";
  const t = useT();
  const router = useRouter();
  const altcha = useRef<AltchaHandle>(null);
  const currentInput = useRef<HTMLInputElement>(null);
  const newInput = useRef<HTMLInputElement>(null);
  const [submits, setSubmits] = useState(0);
  const submit = useGuardedSubmit(t("account.password.unavailable"), altcha);
  const [fields, setFields] = useState<Errors>({});
  const hydrated = useHydrated();
  const formRef = useRef<HTMLFormElement>(null);
  // An account with a second factor confirms it first when its last proof is old: then the change is sent again.
  const [confirming, setConfirming] = useState(false);

  /** Shows the field errors, then moves focus to the first. */
  function showFieldErrors(errors: Errors): boolean {
    flushSync(() => setFields(errors));
    if (errors.currentPassword) currentInput.current?.focus();
    else if (errors.newPassword) newInput.current?.focus();
    return Boolean(errors.currentPassword || errors.newPassword);
  }

  /** Reads the form and shows its own errors; the request to send, or nothing when it stops here. */
  function check(form: HTMLFormElement): Send | undefined {
    const data = new FormData(form);
    const currentPassword = String(data.get("currentPassword") ?? "");
    const newPassword = String(data.get("newPassword") ?? "");
    flushSync(() => setSubmits((n) => n + 1));
    const local: Errors = {};
    if (!setting && currentPassword === "") local.currentPassword = t("account.password.enterCurrent");
    const newError = checkNewPassword(newPassword, email, t, minLength);
    if (newError) local.newPassword = newError;
    if (showFieldErrors(local)) return;
    return async () => {
      const res = await fetch(action, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(
          setting
            ? { formToken, newPassword }
            : { formToken, currentPassword, newPassword, altcha: (await altcha.current?.payload()) ?? "" },
        ),
        // Success is a 303 to the account page; follow it as a navigation, not as a fetch.
        redirect: "manual",
      });
      if (res.type === "opaqueredirect" || (res.status >= 300 && res.status < 400)) {
        form.reset();
        router.push(setting ? "/account?notice=password_set" : "/account?notice=password_changed");
        router.refresh();
        return "done";
      }
      const body = (await res
        .clone()
        .json()
        .catch(() => ({}))) as { fields?: Errors; error?: string };
      if (body.error === "reauthentication_required") {
        setConfirming(true);
        return;
      }
      if (!showFieldErrors({ ...(body.fields?.newPassword ? { newPassword: body.fields.newPassword } : {}) }))
        submit.setRefusal(await refusalFrom(res));
      if (res.status === 401 && currentInput.current) {
        // A wrong current password: cleared and focused, as on the sign-in page.
        currentInput.current.value = "";
        currentInput.current.focus();
      }
    };
  }

  return (
    <>
      <RefusalBanner refusal={submit.refusal} form="sign-in" nowMs={submit.nowMs} testId="change-password-error" />
      {confirming ? (
        <ConfirmItsYou
          formToken={formToken}
          email={email}
          ways={ways}
          reason={t(setting ? "account.password.setConfirmReason" : "account.password.confirmReason")}
          onConfirmed={() => {
            setConfirming(false);
            formRef.current?.requestSubmit();
          }}
          onCancel={() => setConfirming(false)}
        />
      ) : null}
      <form
        onSubmit={(event) => submit.handle(event, check)}
        ref={formRef}
        noValidate
        method="post"
        action={action}
        data-hydrated={hydrated}
        data-testid={setting ? "set-password" : "change-password"}
      >
        <input type="text" name="username" autoComplete="username" value={email} readOnly hidden />
        {setting ? null : (
          <PasswordField
            id="current-password"
            label={t("account.password.current")}
            error={fields.currentPassword}
            inputRef={currentInput}
            name="currentPassword"
            autoComplete="current-password"
            required
            toggle={hydrated}
            hideKey={submits}
          />
        )}
        <PasswordField
          id="new-password"
          label={t("account.password.new")}
          hint={t("account.password.newHint", { min: minLength, max: PASSWORD_LIMITS.max })}
          error={fields.newPassword}
          inputRef={newInput}
          name="newPassword"
          autoComplete="new-password"
          required
          toggle={hydrated}
          hideKey={submits}
        />
        <PasswordStrength field="newPassword" email={email} minLength={minLength} fieldError={fields.newPassword} />
        {setting ? null : <AltchaField ref={altcha} />}
        <noscript>
          <p className="hint">{t("account.password.needsJavaScript")}</p>
        </noscript>
        <button type="submit" className="primary" aria-disabled={submit.blocked ? true : undefined}>
          {setting
            ? submit.pending
              ? t("account.password.setPending")
              : t("account.password.setSubmit")
            : submit.pending
              ? t("account.password.pending")
              : t("account.password.submit")}
        </button>
      </form>
    </>
  );
}

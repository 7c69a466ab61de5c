"use client";

import { useRouter } from "next/navigation";
import { useRef, useState, useSyncExternalStore, type FormEvent } from "react";
import { AltchaField, type AltchaHandle } from "../components/AltchaField";
import { PasswordStrength } from "../components/PasswordStrength";
import { RefusalBanner, refusalFrom, useCountdown, type Refusal } from "../components/RefusalBanner";

type Props = { formToken: string; email: string; minLength: number; maxLength: number };

/**
 * Change password. The proof of work (ALTCHA) needs JavaScript, as on the sign-in page; the form
 * still posts (never GET), so a submit before hydration cannot put a password in a URL.
 */
export function ChangePasswordForm({ formToken, email, minLength, maxLength }: Props) {
  const router = useRouter();
  const altcha = useRef<AltchaHandle>(null);
  const [pending, setPending] = useState(false);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [fields, setFields] = useState<Record<string, string>>({});
  const remainingSeconds = useCountdown(refusal);
  const hydrated = useSyncExternalStore(noSubscription, () => true, () => false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setPending(true);
    setRefusal(null);
    setFields({});
    const form = new FormData(event.currentTarget);
    try {
      const res = await fetch("/api/account/password", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          formToken,
          currentPassword: String(form.get("currentPassword") ?? ""),
          newPassword: String(form.get("newPassword") ?? ""),
          altcha: (await altcha.current?.payload()) ?? "",
        }),
        // Success is a 303 to the account page; follow it as a navigation, not as a fetch.
        redirect: "manual",
      });
      if (res.type === "opaqueredirect" || (res.status >= 300 && res.status < 400)) {
        router.push("/account?notice=password_changed");
        router.refresh();
        (event.target as HTMLFormElement).reset();
        setPending(false);
        return;
      }
      const body = (await res.clone().json().catch(() => ({}))) as { fields?: Record<string, string> };
      setFields(body.fields ?? {});
      setRefusal(await refusalFrom(res));
    } catch {
      setRefusal({ error: "unavailable", message: "Changing your password is unavailable right now. Try again in a moment." });
    }
    altcha.current?.reset();
    setPending(false);
  }

  return (
    <>
      <RefusalBanner refusal={refusal} remainingSeconds={remainingSeconds} testId="change-password-error" />
      <form onSubmit={onSubmit} noValidate method="post" action="/api/account/password" data-hydrated={hydrated} data-testid="change-password">
        <input type="text" name="username" autoComplete="username" value={email} readOnly hidden />
        <label>
          Current password
          <input name="currentPassword" type="password" autoComplete="current-password" required aria-invalid={fields.currentPassword ? true : undefined} />
          <span className="field-error">{fields.currentPassword}</span>
        </label>
        <label>
          New password
          <span className="hint" id="new-password-hint">
            {minLength} to {maxLength} characters, not a common password, not your email. A passphrase of several words works well.
          </span>
          <input
            name="newPassword"
            type="password"
            autoComplete="new-password"
            required
            minLength={minLength}
            maxLength={maxLength}
            aria-invalid={fields.newPassword ? true : undefined}
            aria-describedby="new-password-hint new-password-error"
          />
          <span id="new-password-error" className="field-error">
            {fields.newPassword}
          </span>
        </label>
        <PasswordStrength field="newPassword" email={email} />
        <AltchaField ref={altcha} />
        <noscript>
          <p className="hint">Changing your password needs JavaScript, for the same check as signing in.</p>
        </noscript>
        <button type="submit" disabled={pending || remainingSeconds > 0}>
          {pending ? "Changing password…" : "Change password"}
        </button>
      </form>
    </>
  );
}

function noSubscription(): () => void {
  return () => {};
}

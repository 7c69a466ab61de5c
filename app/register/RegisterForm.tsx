"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useRef, useState, useSyncExternalStore, type FormEvent } from "react";
import { PasswordStrength } from "../components/PasswordStrength";
import { AltchaField, type AltchaHandle } from "../components/AltchaField";
import { RefusalBanner, refusalFrom, useCountdown, type Refusal } from "../components/RefusalBanner";

type Props = { minLength: number; maxLength: number };
type Fields = Partial<Record<"email" | "password", string>>;

export function RegisterForm({ minLength, maxLength }: Props) {
  const router = useRouter();
  const altcha = useRef<AltchaHandle>(null);
  const [pending, setPending] = useState(false);
  // False in the server's HTML and during hydration: until then the browser, not this
  // component, would submit the form (see its action).
  const hydrated = useSyncExternalStore(noSubscription, () => true, () => false);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [fields, setFields] = useState<Fields>({});
  const remainingSeconds = useCountdown(refusal);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setPending(true);
    setRefusal(null);
    setFields({});
    const form = new FormData(event.currentTarget);
    const email = String(form.get("email") ?? "");
    try {
      const res = await fetch("/api/register", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ email, password: String(form.get("password") ?? ""), altcha: (await altcha.current?.payload()) ?? "" }),
      });
      if (res.status === 201) {
        router.push(`/sign-in?registered=1&email=${encodeURIComponent(email.trim())}`);
        return;
      }
      const body = (await res.clone().json().catch(() => ({}))) as { fields?: Fields };
      setFields(body.fields ?? {});
      setRefusal(await refusalFrom(res));
    } catch {
      setRefusal({ error: "unavailable", message: "Registration is unavailable right now. Try again in a moment." });
    }
    // Each solution is accepted once: the next attempt needs a fresh one.
    altcha.current?.reset();
    setPending(false);
  }

  return (
    <>
      <RefusalBanner refusal={refusal} remainingSeconds={remainingSeconds} testId="register-error" />
      {/* Posted, never GET: a submit before hydration must not put the password in the URL. */}
      <form onSubmit={onSubmit} noValidate method="post" action="/api/no-script/register" data-hydrated={hydrated}>
        <label>
          Email
          <input name="email" type="email" autoComplete="email" required aria-invalid={fields.email ? true : undefined} aria-describedby="email-error" />
          <span id="email-error" className="field-error">
            {fields.email}
          </span>
        </label>
        <label>
          Password
          <span className="hint" id="password-hint">
            {minLength} to {maxLength} characters. A passphrase of several words works well.
          </span>
          <input
            name="password"
            type="password"
            autoComplete="new-password"
            required
            minLength={minLength}
            maxLength={maxLength}
            aria-invalid={fields.password ? true : undefined}
            aria-describedby="password-hint password-error"
          />
          <span id="password-error" className="field-error">
            {fields.password}
          </span>
        </label>
        <PasswordStrength field="password" emailField="email" />
        <AltchaField ref={altcha} />
        <button type="submit" disabled={pending || remainingSeconds > 0}>
          {pending ? "Creating account…" : "Create account"}
        </button>
      </form>
      <p>
        Already registered? <Link href="/sign-in">Sign in</Link>.
      </p>
    </>
  );
}

function noSubscription(): () => void {
  return () => {};
}

"use client";

import { useT } from "../components/Messages";
import Link from "next/link";
import { useEffect, useRef, useState, type FormEvent, type ReactNode } from "react";
import { useHydrated } from "../components/hydrated";
import { flushSync } from "react-dom";
import { firstInvalid, type FieldErrors } from "@/lib/ui/field-checks";
import { PASSWORD_LIMITS, checkRegistration } from "@/lib/ui/password-checks";
import { clearWhenCorrected, useFocusFirstEmpty } from "../components/form-helpers";
import { handled } from "../components/handled";
import { secondsLeft } from "@/lib/ui/refusal";
import { PasswordStrength } from "../components/PasswordStrength";
import { AltchaField, type AltchaHandle } from "../components/AltchaField";
import { Field } from "../components/Field";
import { PasswordInput } from "../components/PasswordInput";
import { EmailMeALink } from "../components/EmailMeALink";
import { RefusalBanner, localRefusal, refusalFrom, useRefusalClock, type Refusal } from "../components/RefusalBanner";

export function RegisterForm({ notice }: { notice: ReactNode }) {
  const t = useT();
  const altcha = useRef<AltchaHandle>(null);
  const emailInput = useRef<HTMLInputElement>(null);
  const passwordInput = useRef<HTMLInputElement>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const [pending, setPending] = useState(false);
  const [submits, setSubmits] = useState(0);
  // False in the server's HTML and during hydration: until then the browser, not this
  // component, would submit the form (see its action).
  const hydrated = useHydrated();
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [sent, setSent] = useState<{ email: string; message: string } | null>(null);
  const [fields, setFields] = useState<FieldErrors>({});
  const nowMs = useRefusalClock(refusal);
  const waiting = secondsLeft(refusal, nowMs) > 0;
  useFocusFirstEmpty(formRef, hydrated && sent === null);

  // An error goes as soon as its field is corrected (it never appears while typing).
  const onInput = clearWhenCorrected(fields, setFields, (value) => checkRegistration(value("email"), value("password"), t));

  /** Shows the field errors, then moves focus to the first, so its error is read with its label. */
  function showFieldErrors(errors: FieldErrors): boolean {
    const first = firstInvalid(errors);
    flushSync(() => setFields(errors));
    if (first) (first === "email" ? emailInput : passwordInput).current?.focus();
    return first !== undefined;
  }

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    // The button is never disabled (that would drop focus to <body>): it says aria-disabled instead.
    if (pending || waiting) return;
    const form = new FormData(event.currentTarget);
    const email = String(form.get("email") ?? "");
    const password = String(form.get("password") ?? "");
    flushSync(() => {
      setRefusal(null);
      setSubmits((n) => n + 1);
    });
    // A typo costs neither a proof of work nor one of the network's registrations.
    if (showFieldErrors(checkRegistration(email, password, t))) return;
    setPending(true);
    try {
      const res = await fetch("/api/register", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        // The time zone lets the account's mails give times in the owner's clock as well as UTC.
        body: JSON.stringify({
          email,
          password,
          altcha: (await altcha.current?.payload()) ?? "",
          timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
        }),
      });
      // The same answer for a new address and a taken one: the email says which it was.
      if (res.status === 202) {
        const body = (await res.json()) as { message: string };
        setSent({ email: email.trim(), message: body.message });
        return;
      }
      const body = (await res
        .clone()
        .json()
        .catch(() => ({}))) as { fields?: Record<string, string> };
      const known: FieldErrors = { email: body.fields?.email, password: body.fields?.password };
      // Errors the form can show beside a field go there; anything else is a banner.
      if (!showFieldErrors(Object.fromEntries(Object.entries(known).filter(([, message]) => message)))) setRefusal(await refusalFrom(res));
    } catch {
      setRefusal(localRefusal("unavailable", "Registration is unavailable right now. Try again in a moment."));
    }
    // Each solution is accepted once: the next attempt needs a fresh one.
    altcha.current?.reset();
    setPending(false);
  }

  if (sent) {
    return (
      <CheckEmail
        email={sent.email}
        message={sent.message}
        onAnotherAddress={() => {
          setSent(null);
          setFields({});
        }}
      />
    );
  }
  return (
    <>
      <h1>Create an account</h1>
      {notice}
      <RefusalBanner refusal={refusal} form="register" nowMs={nowMs} testId="register-error" />
      {/* Posted, never GET: a submit before hydration must not put the password in the URL. */}
      <form
        ref={formRef}
        onSubmit={(event) => handled(onSubmit(event))}
        onInput={onInput}
        noValidate
        method="post"
        action="/api/no-script/register"
        data-hydrated={hydrated}
      >
        <Field id="register-email" label="Email" error={fields.email}>
          {(aria) => <input id="register-email" ref={emailInput} name="email" type="email" autoComplete="email" required {...aria} />}
        </Field>
        <Field
          id="register-password"
          label="Password"
          hint={`${PASSWORD_LIMITS.min} to ${PASSWORD_LIMITS.max} characters, not a common or breached password. A passphrase of several words works well.`}
          error={fields.password}
        >
          {(aria) => (
            <PasswordInput
              id="register-password"
              inputRef={passwordInput}
              name="password"
              autoComplete="new-password"
              required
              toggle={hydrated}
              hideKey={submits}
              {...aria}
            />
          )}
        </Field>
        <PasswordStrength field="password" emailField="email" fieldError={fields.password} />
        <AltchaField ref={altcha} />
        <button type="submit" className="primary" aria-disabled={pending || waiting ? true : undefined}>
          {pending ? "Creating account…" : "Create account"}
        </button>
      </form>
      <p>
        Already registered? <Link href="/sign-in">Sign in</Link>.
      </p>
    </>
  );
}

/**
 * "Check your email", a state of its own: its heading (focused, so a screen reader says where the
 * form went), "Send it again" (POST /api/email/verification: the same answer for every address,
 * and the per-account mail quota behind it) and a way back to fix a mistyped address.
 */
function CheckEmail({ email, message, onAnotherAddress }: { email: string; message: string; onAnotherAddress: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

  return (
    <>
      <h1 ref={heading} tabIndex={-1}>
        Check your email
      </h1>
      <p className="banner ok" role="status" data-testid="register-sent">
        {message}
      </p>
      <p>
        It went to <strong data-testid="register-sent-to">{email}</strong>. Open the link in it to confirm your address; nothing arrived
        after a few minutes? Check the spam folder, or send it again.
      </p>
      <EmailMeALink endpoint="/api/email/verification" email={email} action="Send it again" testId="resent" />
      <p>
        Wrong address?{" "}
        <button type="button" className="link inline" onClick={onAnotherAddress}>
          Use another address
        </button>
        . Already confirmed? <Link href={`/sign-in?email=${encodeURIComponent(email)}`}>Sign in</Link>.
      </p>
    </>
  );
}

"use client";

import { useRich, useT } from "../components/Messages";
import Link from "next/link";
import { useEffect, useRef, useState, type ReactNode } from "react";
import { useHydrated } from "../components/hydrated";
import { flushSync } from "react-dom";
import { checkEmail, firstInvalid, type FieldErrors } from "@/lib/ui/field-checks";
import { PASSWORD_LIMITS, checkRegistration } from "@/lib/ui/password-checks";
import { clearWhenCorrected, useFocusFirstEmpty } from "../components/form-helpers";
import { PasswordStrength } from "../components/PasswordStrength";
import { AltchaField, type AltchaHandle } from "../components/AltchaField";
import { Field } from "../components/Field";
import { PasswordField } from "../components/PasswordInput";
import { EmailMeALink } from "../components/EmailMeALink";
import { RefusalBanner, refusalFrom } from "../components/RefusalBanner";
import { useGuardedSubmit, type Send } from "../components/guarded-submit";
import { carryEmailToSignIn } from "../components/sign-in-email";

export function RegisterForm({ notice }: { notice: ReactNode }) {
  const t = useT();
  const rich = useRich();
  const altcha = useRef<AltchaHandle>(null);
  const emailInput = useRef<HTMLInputElement>(null);
  const passwordInput = useRef<HTMLInputElement>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const [submits, setSubmits] = useState(0);
  // False in the server's HTML and during hydration: until then the browser, not this
  // component, would submit the form (see its action).
  const hydrated = useHydrated();
  const submit = useGuardedSubmit(t("register.unavailable"), altcha);
  const [sent, setSent] = useState<{ email: string } | null>(null);
  const [fields, setFields] = useState<FieldErrors>({});
  // "Create an account with a passkey": the address only; the emailed link's page makes the passkey.
  const [withPasskey, setWithPasskey] = useState(false);
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

  /** Reads the form and shows its own errors; the request to send, or nothing when it stops here. */
  function check(formElement: HTMLFormElement): Send | undefined {
    const form = new FormData(formElement);
    const email = String(form.get("email") ?? "");
    const password = String(form.get("password") ?? "");
    flushSync(() => setSubmits((n) => n + 1));
    // A typo costs neither a proof of work nor one of the network's registrations.
    const local = withPasskey ? { email: checkEmail(email, t) } : checkRegistration(email, password, t);
    if (showFieldErrors(local)) return;
    return async () => {
      const altchaPayload = (await altcha.current?.payload()) ?? "";
      const res = withPasskey
        ? await fetch("/api/register/passkey", {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ email, altcha: altchaPayload }),
          })
        : await fetch("/api/register", {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            // The time zone lets the account's mails give times in the owner's clock as well as UTC.
            body: JSON.stringify({ email, password, altcha: altchaPayload, timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone }),
          });
      // The same answer for a new address and a taken one: the email says which it was.
      if (res.status === 202) {
        setSent({ email: email.trim() });
        return "done";
      }
      const body = (await res
        .clone()
        .json()
        .catch(() => ({}))) as { fields?: Record<string, string> };
      const known: FieldErrors = { email: body.fields?.email, password: body.fields?.password };
      // Errors the form can show beside a field go there; anything else is a banner.
      if (!showFieldErrors(Object.fromEntries(Object.entries(known).filter(([, message]) => message))))
        submit.setRefusal(await refusalFrom(res));
    };
  }

  if (sent) {
    return (
      <CheckEmail
        email={sent.email}
        withPasskey={withPasskey}
        onAnotherAddress={() => {
          setSent(null);
          setFields({});
        }}
      />
    );
  }
  return (
    <>
      <h1>{withPasskey ? t("register.passkeyHeading") : t("register.heading")}</h1>
      {notice}
      {withPasskey ? <p className="hint">{t("register.passkeyHint")}</p> : null}
      <RefusalBanner refusal={submit.refusal} form="register" nowMs={submit.nowMs} testId="register-error" />
      {/* Posted, never GET: a submit before hydration must not put the password in the URL. */}
      <form
        ref={formRef}
        onSubmit={(event) => submit.handle(event, check)}
        onInput={onInput}
        noValidate
        method="post"
        action="/api/no-script/register"
        data-hydrated={hydrated}
      >
        <Field id="register-email" label={t("forms.email")} error={fields.email}>
          {(aria) => <input id="register-email" ref={emailInput} name="email" type="email" autoComplete="email" required {...aria} />}
        </Field>
        {withPasskey ? null : (
          <>
            <PasswordField
              id="register-password"
              label={t("forms.password")}
              hint={t("register.passwordHint", { min: PASSWORD_LIMITS.min, max: PASSWORD_LIMITS.max })}
              error={fields.password}
              inputRef={passwordInput}
              name="password"
              autoComplete="new-password"
              required
              toggle={hydrated}
              hideKey={submits}
            />
            <PasswordStrength field="password" emailField="email" fieldError={fields.password} />
          </>
        )}
        <AltchaField ref={altcha} />
        <button type="submit" className="primary" aria-disabled={submit.blocked ? true : undefined}>
          {submit.pending ? t("register.pending") : withPasskey ? t("register.passkeySubmit") : t("register.submit")}
        </button>
      </form>
      <button
        type="button"
        className="secondary wraps"
        onClick={() => {
          setWithPasskey(!withPasskey);
          setFields({});
          submit.setRefusal(null);
        }}
      >
        {withPasskey ? t("register.usePassword") : t("register.withPasskey")}
      </button>
      <p>{rich("register.alreadyRegistered", {}, { link: (chunks) => <Link href="/sign-in">{chunks}</Link> })}</p>
    </>
  );
}

/**
 * "Check your email", a state of its own: its heading (focused, so a screen reader says where the
 * form went), where the message went (said once: the heading says "check your email", the
 * server's sentence would say it again), "Send it again" (POST /api/email/verification: the same
 * answer for every address, and the per-account mail quota behind it) and, after their own
 * question, the ways back to fix a mistyped address or sign in: buttons on a row of their own,
 * not inside a sentence.
 */
function CheckEmail({ email, withPasskey, onAnotherAddress }: { email: string; withPasskey: boolean; onAnotherAddress: () => void }) {
  const t = useT();
  const rich = useRich();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

  return (
    <>
      <h1 ref={heading} tabIndex={-1}>
        {t("register.checkEmail")}
      </h1>
      <p className="banner ok" role="status" data-testid="register-sent">
        {rich(
          withPasskey ? "register.passkeySentTo" : "register.sentTo",
          { email },
          { address: (chunks) => <strong data-testid="register-sent-to">{chunks}</strong> },
        )}
      </p>
      <EmailMeALink endpoint="/api/email/verification" email={email} action={t("register.sendAgain")} testId="resent" />
      <p id="register-wrong-address">{t("register.wrongAddress")}</p>
      <div className="actions" role="group" aria-labelledby="register-wrong-address">
        <button type="button" className="secondary" onClick={onAnotherAddress}>
          {t("register.useAnotherAddress")}
        </button>
        <Link href="/sign-in" className="button-link" onClick={() => carryEmailToSignIn(email)}>
          {t("register.signIn")}
        </Link>
      </div>
    </>
  );
}

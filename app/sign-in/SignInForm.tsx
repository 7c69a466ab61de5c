"use client";

import { useRich, useT } from "../components/Messages";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { Suspense, lazy, useEffect, useRef, useState } from "react";
import { useHydrated } from "../components/hydrated";
import { clearWhenCorrected, useFocusFirstEmpty } from "../components/form-helpers";
import { flushSync } from "react-dom";
import { checkSignIn, firstInvalid, type FieldErrors } from "@/lib/ui/field-checks";
import { AltchaField, type AltchaHandle } from "../components/AltchaField";
import { EmailMeALink } from "../components/EmailMeALink";
import { Field } from "../components/Field";
import { PasswordField } from "../components/PasswordInput";
import { RefusalBanner, localRefusal, refusalFrom } from "../components/RefusalBanner";
import { useGuardedSubmit, type Send } from "../components/guarded-submit";
import { takeCarriedEmail } from "../components/sign-in-email";
import type { SecondStepMethod } from "../components/SecondStep";
// Fetched only when a right password asks for it: the page itself does not carry it.
const SecondStep = lazy(() => import("../components/SecondStep").then((module) => ({ default: module.SecondStep })));

type Props = { callbackPath: string; done: string | null };

export function SignInForm({ callbackPath, done }: Props) {
  const t = useT();
  const rich = useRich();
  const router = useRouter();
  const altcha = useRef<AltchaHandle>(null);
  const emailInput = useRef<HTMLInputElement>(null);
  const passwordInput = useRef<HTMLInputElement>(null);
  const formRef = useRef<HTMLFormElement>(null);
  const [submits, setSubmits] = useState(0);
  // False in the server's HTML and during hydration: until then the browser, not this
  // component, would submit the form (see its action).
  const hydrated = useHydrated();
  const submit = useGuardedSubmit(t("messages.signInUnavailable"), altcha);
  const { refusal, setRefusal } = submit;
  const [fields, setFields] = useState<FieldErrors>({});
  // The address the last attempt named: a lock banner offers to email its owner a new link.
  const [attempted, setAttempted] = useState("");
  // A right password for an account with a second step: the page asks for it (no session yet).
  const [secondStep, setSecondStep] = useState<SecondStepMethod[] | null>(null);
  // The address a link's page or "Already confirmed? Sign in" handed over (never in the URL).
  useEffect(() => {
    const carried = takeCarriedEmail();
    if (carried && emailInput.current && !emailInput.current.value) emailInput.current.value = carried;
  }, []);
  const [rememberDays, setRememberDays] = useState(0);
  // Mailbox first: the code comes before the password check. Once it is right, the password typed
  // is sent again (kept in memory only for this, never stored), or typed again if it is gone.
  const [mailboxFirst, setMailboxFirst] = useState(false);
  const [mailboxProved, setMailboxProved] = useState<"resending" | "retype" | null>(null);
  const typedPassword = useRef("");
  // A prefilled email (after confirming, from a link) leaves the cursor in the password.
  useFocusFirstEmpty(formRef, hydrated);
  // "Sign in again" from the second step: the form comes back with the email kept, the cursor in
  // the password (the likeliest thing to retype: no code came because it was wrong).
  const [restarts, setRestarts] = useState(0);
  useEffect(() => {
    if (restarts > 0) passwordInput.current?.focus();
  }, [restarts]);
  // The form is back after the mailbox was proved: the same password again, now from a known device.
  useEffect(() => {
    if (mailboxProved !== "resending" || !passwordInput.current || !formRef.current) return;
    passwordInput.current.value = typedPassword.current;
    typedPassword.current = "";
    formRef.current.requestSubmit();
  }, [mailboxProved]);

  // An error goes as soon as its field is corrected (it never appears while typing).
  const onInput = clearWhenCorrected(fields, setFields, (value) => checkSignIn(value("email"), value("password"), t));

  /** Reads the form and shows its own errors; the request to send, or nothing when it stops here. */
  function check(formElement: HTMLFormElement): Send | undefined {
    const form = new FormData(formElement);
    const email = String(form.get("email") ?? "");
    const password = String(form.get("password") ?? "");
    const errors = checkSignIn(email, password, t);
    const invalid = firstInvalid(errors);
    // Rendered before focus moves, so the field's error is read with it.
    flushSync(() => {
      setFields(errors);
      setAttempted(email.trim());
      setSubmits((n) => n + 1);
    });
    if (invalid) {
      (invalid === "email" ? emailInput : passwordInput).current?.focus();
      return;
    }
    typedPassword.current = password;
    return async () => {
      // The CSRF rule needs no token here (no session yet): the browser says the post is this page's own.
      const altchaPayload = await (altcha.current?.payload() ?? Promise.resolve(""));
      const res = await fetch("/api/auth/callback/credentials", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          email,
          password,
          altcha: altchaPayload,
          callbackUrl: callbackPath,
          json: "true",
        }),
      });
      if (res.status >= 400 && res.headers.get("content-type")?.includes("application/json") && res.status !== 401) {
        typedPassword.current = "";
        const refused = await refusalFrom(res);
        // A wait of minutes: the password is not left in a page the person may walk away from,
        // and it is retyped after the wait like a wrong one. Focus stays on the held button.
        if ((refused.error === "rate_limited" || refused.error === "locked") && passwordInput.current) passwordInput.current.value = "";
        return setRefusal(refused);
      }
      const body = (await res.json().catch(() => ({}))) as {
        url?: string;
        error?: string;
        methods?: SecondStepMethod[];
        rememberDays?: number;
        mailboxFirst?: boolean;
      };
      if (body.error === "mfa_required" || body.error === "device_confirmation_required") {
        setRememberDays(body.rememberDays ?? 0);
        setMailboxFirst(body.mailboxFirst === true);
        if (body.mailboxFirst !== true) typedPassword.current = "";
        setSecondStep(body.methods ?? []);
        return "done";
      }
      typedPassword.current = "";
      if (body.url && !new URL(body.url, window.location.href).searchParams.has("error")) {
        router.push(callbackPath);
        router.refresh();
        return "leaving";
      }
      setRefusal(localRefusal("invalid_credentials", t("messages.incorrectCredentials")));
      // A wrong password is retyped, not edited: clear it and put the cursor there.
      if (passwordInput.current) {
        passwordInput.current.value = "";
        passwordInput.current.focus();
      }
    };
  }

  if (secondStep) {
    return (
      <Suspense fallback={null}>
        <SecondStep
          methods={secondStep}
          callbackPath={callbackPath}
          rememberDays={rememberDays}
          // A full navigation, so every server component sees the new session cookie.
          onDone={() => window.location.assign(callbackPath)}
          onRestart={() => {
            typedPassword.current = "";
            setSecondStep(null);
            setRestarts((n) => n + 1);
            altcha.current?.reset();
          }}
          mailboxFirst={mailboxFirst}
          onMailboxProved={() => {
            setSecondStep(null);
            setMailboxProved(typedPassword.current ? "resending" : "retype");
            if (!typedPassword.current) setRestarts((n) => n + 1);
          }}
        />
      </Suspense>
    );
  }

  return (
    <>
      {mailboxProved && !refusal ? (
        <p className="banner ok" role="status" data-testid="mailbox-proved">
          {t(mailboxProved === "resending" ? "signIn.mailboxProved" : "signIn.mailboxProvedRetype")}
        </p>
      ) : null}
      {done && !refusal && !mailboxProved ? (
        <p className="banner ok" role="status" data-testid="sign-in-done">
          {done}
        </p>
      ) : null}
      <RefusalBanner refusal={refusal} form="sign-in" nowMs={submit.nowMs} testId="sign-in-error" />
      {((refusal?.error === "locked" && refusal.approximate) || (refusal?.error === "rate_limited" && refusal.scope === "username")) &&
      attempted ? (
        // The account-wide lock (a stranger's client), or this address's limit for the account (which
        // only failures fill, so the lock's threshold came first): its owner was emailed a way past it.
        <div className="lock-way-out" data-testid="lock-way-out">
          <p>{t("signIn.lockWayOut")}</p>
          <EmailMeALink endpoint="/api/unlock/request" email={attempted} action={t("signIn.emailNewLink")} testId="unlock-requested" />
        </div>
      ) : null}
      {/* Posted, never GET: a submit before hydration must not put the password in the URL. */}
      <form
        ref={formRef}
        onSubmit={(event) => submit.handle(event, check)}
        onInput={onInput}
        noValidate
        method="post"
        action={`/api/no-script/sign-in?callbackUrl=${encodeURIComponent(callbackPath)}`}
        data-hydrated={hydrated}
      >
        <Field id="sign-in-email" label={t("forms.email")} error={fields.email}>
          {(aria) => (
            <input
              id="sign-in-email"
              ref={emailInput}
              name="email"
              type="email"
              // "webauthn": the browser may offer the account's passkeys here (conditional mediation).
              autoComplete="username webauthn"
              required
              defaultValue={attempted || undefined}
              {...aria}
            />
          )}
        </Field>
        <PasswordField
          id="sign-in-password"
          label={t("forms.password")}
          error={fields.password}
          inputRef={passwordInput}
          name="password"
          autoComplete="current-password"
          required
          toggle={hydrated}
          hideKey={submits}
        />
        <p className="hint">
          <Link href="/forgot-password">{t("signIn.forgot")}</Link>
        </p>
        <AltchaField ref={altcha} />
        <button type="submit" className="primary" aria-disabled={submit.blocked ? true : undefined}>
          {submit.pending ? t("signIn.pending") : t("signIn.submit")}
        </button>
      </form>
      <p>{rich("signIn.noAccount", {}, { link: (chunks) => <Link href="/register">{chunks}</Link> })}</p>
    </>
  );
}

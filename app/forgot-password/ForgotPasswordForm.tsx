"use client";

import { useT } from "../components/Messages";
import Link from "next/link";
import { useRef, useState, type FormEvent } from "react";
import { useHydrated } from "../components/hydrated";
import { useFocusFirstEmpty } from "../components/form-helpers";
import { handled } from "../components/handled";
import { flushSync } from "react-dom";
import { checkSignIn } from "@/lib/ui/field-checks";
import { secondsLeft } from "@/lib/ui/refusal";
import { AltchaField, type AltchaHandle } from "../components/AltchaField";
import { Field } from "../components/Field";
import { RefusalBanner, localRefusal, refusalFrom, useRefusalClock, type Refusal } from "../components/RefusalBanner";
import { UNAVAILABLE } from "@/lib/ui/messages";

/** "Forgot password?": the same answer for every address; the email (if any) says the rest. */
export function ForgotPasswordForm({ initialEmail }: { initialEmail: string }) {
  const t = useT();
  const altcha = useRef<AltchaHandle>(null);
  const emailInput = useRef<HTMLInputElement>(null);
  const hydrated = useHydrated();
  const [pending, setPending] = useState(false);
  const [sent, setSent] = useState<string | null>(null);
  const [emailError, setEmailError] = useState<string | undefined>(undefined);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const nowMs = useRefusalClock(refusal);
  const waiting = secondsLeft(refusal, nowMs) > 0;
  const formRef = useRef<HTMLFormElement>(null);
  useFocusFirstEmpty(formRef, hydrated && sent === null);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (pending || waiting) return;
    const email = String(new FormData(event.currentTarget).get("email") ?? "");
    const problem = checkSignIn(email, "-", t).email;
    flushSync(() => {
      setRefusal(null);
      setEmailError(problem);
    });
    if (problem) {
      emailInput.current?.focus();
      return;
    }
    setPending(true);
    try {
      const res = await fetch("/api/password/forgot", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ email, altcha: (await altcha.current?.payload()) ?? "" }),
      });
      if (res.status === 202) {
        const body = (await res.json()) as { message: string };
        setSent(body.message);
      } else {
        setRefusal(await refusalFrom(res));
      }
    } catch {
      setRefusal(localRefusal("unavailable", UNAVAILABLE));
    }
    altcha.current?.reset();
    setPending(false);
  }

  if (sent) {
    return (
      <>
        <p className="banner ok" role="status" data-testid="forgot-sent">
          {sent}
        </p>
        <p>
          Nothing arrived? Check the spam folder, then <Link href="/forgot-password">try again</Link>.{" "}
          <Link href="/sign-in">Back to sign in</Link>.
        </p>
      </>
    );
  }
  return (
    <>
      <RefusalBanner refusal={refusal} form="recovery" nowMs={nowMs} testId="forgot-error" />
      <form
        ref={formRef}
        onSubmit={(event) => handled(onSubmit(event))}
        noValidate
        method="post"
        action="/api/no-script/forgot-password"
        data-hydrated={hydrated}
      >
        <Field
          id="forgot-email"
          label="Email"
          hint="We will send a link to choose a new password, if an account uses this address."
          error={emailError}
        >
          {(aria) => (
            <input
              id="forgot-email"
              ref={emailInput}
              name="email"
              type="email"
              autoComplete="username"
              required
              defaultValue={initialEmail}
              {...aria}
            />
          )}
        </Field>
        <AltchaField ref={altcha} />
        <button type="submit" className="primary" aria-disabled={pending || waiting ? true : undefined}>
          {pending ? "Sending…" : "Send me a link"}
        </button>
      </form>
      <p>
        Remembered it? <Link href="/sign-in">Sign in</Link>.
      </p>
    </>
  );
}

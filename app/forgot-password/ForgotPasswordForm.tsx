"use client";

import { useRich, useT } from "../components/Messages";
import Link from "next/link";
import { useRef, useState } from "react";
import { useHydrated } from "../components/hydrated";
import { useFocusFirstEmpty } from "../components/form-helpers";
import { flushSync } from "react-dom";
import { checkEmail } from "@/lib/ui/field-checks";
import { AltchaField, type AltchaHandle } from "../components/AltchaField";
import { Field } from "../components/Field";
import { useGuardedSubmit, type Send } from "../components/guarded-submit";
import { RefusalBanner, refusalFrom } from "../components/RefusalBanner";

/** "Forgot password?": the same answer for every address; the email (if any) says the rest. */
export function ForgotPasswordForm({ initialEmail }: { initialEmail: string }) {
  const t = useT();
  const rich = useRich();
  const altcha = useRef<AltchaHandle>(null);
  const emailInput = useRef<HTMLInputElement>(null);
  const hydrated = useHydrated();
  const submit = useGuardedSubmit(t("messages.unavailable"), altcha);
  const [sent, setSent] = useState<string | null>(null);
  const [emailError, setEmailError] = useState<string | undefined>(undefined);
  const formRef = useRef<HTMLFormElement>(null);
  useFocusFirstEmpty(formRef, hydrated && sent === null);

  /** Reads the form and shows its own errors; the request to send, or nothing when it stops here. */
  function check(form: HTMLFormElement): Send | undefined {
    const email = String(new FormData(form).get("email") ?? "");
    const problem = checkEmail(email, t);
    flushSync(() => setEmailError(problem));
    if (problem) {
      emailInput.current?.focus();
      return;
    }
    return async () => {
      const res = await fetch("/api/password/forgot", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ email, altcha: (await altcha.current?.payload()) ?? "" }),
      });
      if (res.status === 202) setSent(((await res.json()) as { message: string }).message);
      else submit.setRefusal(await refusalFrom(res));
    };
  }

  if (sent) {
    return (
      <>
        <p className="banner ok" role="status" data-testid="forgot-sent">
          {sent}
        </p>
        <p>
          {rich(
            "recovery.forgot.nothingArrived",
            {},
            {
              retry: (chunks) => <Link href="/forgot-password">{chunks}</Link>,
              back: (chunks) => <Link href="/sign-in">{chunks}</Link>,
            },
          )}
        </p>
      </>
    );
  }
  return (
    <>
      <RefusalBanner refusal={submit.refusal} form="recovery" nowMs={submit.nowMs} testId="forgot-error" />
      <form
        ref={formRef}
        onSubmit={(event) => submit.handle(event, check)}
        noValidate
        method="post"
        action="/api/no-script/forgot-password"
        data-hydrated={hydrated}
      >
        <Field id="forgot-email" label={t("forms.email")} hint={t("recovery.forgot.emailHint")} error={emailError}>
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
        <button type="submit" className="primary" aria-disabled={submit.blocked ? true : undefined}>
          {submit.pending ? t("forms.sending") : t("recovery.forgot.submit")}
        </button>
      </form>
      <p>{rich("recovery.forgot.remembered", {}, { link: (chunks) => <Link href="/sign-in">{chunks}</Link> })}</p>
    </>
  );
}

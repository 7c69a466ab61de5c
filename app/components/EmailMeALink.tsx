"use client";

import { useT } from "./Messages";
import { useRef, useState } from "react";
import { AltchaField, type AltchaHandle } from "./AltchaField";
import { useGuardedSubmit, type Send } from "./guarded-submit";
import { RefusalBanner, refusalFrom } from "./RefusalBanner";

/**
 * A one-button form that asks for an emailed link for `email` ("Send it again", "Email me a new
 * link"): the proof of work, then the route's answer, which is the same for every address, so it
 * is shown as it comes. It is only ever drawn by a hydrated form (after a 202, after a refusal).
 */
export function EmailMeALink({
  endpoint,
  email,
  action,
  testId,
}: {
  endpoint: "/api/email/verification" | "/api/unlock/request";
  email: string;
  action: string;
  testId: string;
}) {
  const t = useT();
  const altcha = useRef<AltchaHandle>(null);
  const submit = useGuardedSubmit(t("messages.unavailable"), altcha);
  const [answer, setAnswer] = useState<string | null>(null);

  function check(): Send {
    setAnswer(null);
    return async () => {
      const res = await fetch(endpoint, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ email, altcha: (await altcha.current?.payload()) ?? "" }),
      });
      if (res.status === 202) setAnswer(((await res.json()) as { message: string }).message);
      else submit.setRefusal(await refusalFrom(res));
    };
  }

  return (
    <form className="email-me" onSubmit={(event) => submit.handle(event, check)} noValidate method="post">
      <RefusalBanner refusal={submit.refusal} form="recovery" nowMs={submit.nowMs} testId={`${testId}-error`} />
      <p role="status" data-testid={testId} className={answer ? "banner ok" : "sr-only"}>
        {answer ?? ""}
      </p>
      <AltchaField ref={altcha} />
      <button type="submit" className="secondary" aria-disabled={submit.blocked ? true : undefined}>
        {submit.pending ? t("forms.sending") : action}
      </button>
    </form>
  );
}

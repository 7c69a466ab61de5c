"use client";

import { useT } from "./Messages";
import { useRef, useState, type FormEvent } from "react";
import { secondsLeft } from "@/lib/ui/refusal";
import { AltchaField, type AltchaHandle } from "./AltchaField";
import { handled } from "./handled";
import { RefusalBanner, localRefusal, refusalFrom, useRefusalClock, type Refusal } from "./RefusalBanner";

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
  const [pending, setPending] = useState(false);
  const [answer, setAnswer] = useState<string | null>(null);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const nowMs = useRefusalClock(refusal);
  const waiting = secondsLeft(refusal, nowMs) > 0;

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (pending || waiting) return;
    setPending(true);
    setRefusal(null);
    setAnswer(null);
    try {
      const res = await fetch(endpoint, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ email, altcha: (await altcha.current?.payload()) ?? "" }),
      });
      if (res.status === 202) setAnswer(((await res.json()) as { message: string }).message);
      else setRefusal(await refusalFrom(res));
    } catch {
      setRefusal(localRefusal("unavailable", t("messages.unavailable")));
    }
    // Each solution is accepted once: the next request needs a fresh one.
    altcha.current?.reset();
    setPending(false);
  }

  return (
    <form className="email-me" onSubmit={(event) => handled(onSubmit(event))} noValidate method="post">
      <RefusalBanner refusal={refusal} form="recovery" nowMs={nowMs} testId={`${testId}-error`} />
      <p role="status" data-testid={testId} className={answer ? "banner ok" : "sr-only"}>
        {answer ?? ""}
      </p>
      <AltchaField ref={altcha} />
      <button type="submit" className="secondary" aria-disabled={pending || waiting ? true : undefined}>
        {pending ? t("forms.sending") : action}
      </button>
    </form>
  );
}

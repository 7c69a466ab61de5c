"use client";

import { useEffect, useState } from "react";
import { describeRefusal, refusalFromBody, type FormKind, type Refusal } from "@/lib/ui/refusal-banner";
import { useLocale, useRich, useT } from "./Messages";

export type { Refusal };

/** Reads a refusal from a JSON error response; its clock starts now, when the answer arrived. */
export async function refusalFrom(res: Response, receivedAtMs = Date.now()): Promise<Refusal> {
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  return refusalFromBody(body, res.headers.get("Retry-After"), receivedAtMs);
}

/** A refusal the form decided itself (no response to read). */
export function localRefusal(error: string, message: string): Refusal {
  return { error, message, receivedAtMs: Date.now() };
}

/**
 * The clock a refusal's countdown reads. Its first value is the moment the answer arrived (not
 * when the page was loaded, which showed a wrong figure for a frame); it ticks until the wait ends.
 */
export function useRefusalClock(refusal: Refusal | null): number {
  const [tick, setTick] = useState<{ refusal: Refusal | null; nowMs: number }>({ refusal: null, nowMs: 0 });
  useEffect(() => {
    const retryAtMs = refusal?.retryAtMs;
    if (!refusal || retryAtMs === undefined) return;
    const timer = setInterval(() => {
      const nowMs = Date.now();
      setTick({ refusal, nowMs });
      if (nowMs >= retryAtMs) clearInterval(timer);
    }, 250);
    return () => clearInterval(timer);
  }, [refusal]);
  return tick.refusal === refusal ? tick.nowMs : (refusal?.receivedAtMs ?? 0);
}

function clockTime(ms: number, locale: string): string {
  return new Date(ms).toLocaleTimeString(locale === "xx" ? "en" : locale, { hour: "numeric", minute: "2-digit", second: "2-digit" });
}

/**
 * Why an attempt was refused, in one sentence, and how long to wait, in another. Screen readers
 * hear the reason and the time of day once, when it arrives (role=alert), and again only when the
 * wait is over and the sentence changes; the ticking countdown is for the eyes only.
 */
export function RefusalBanner({
  refusal,
  form,
  nowMs,
  testId,
}: {
  refusal: Refusal | null;
  form: FormKind;
  nowMs: number;
  testId: string;
}) {
  const t = useT();
  const rich = useRich();
  const locale = useLocale();
  const view = refusal ? describeRefusal(refusal, form, nowMs, t) : null;
  // What screen readers hear about the wait: fixed when the answer arrives, so it never re-announces.
  const heard = refusal ? describeRefusal(refusal, form, refusal.receivedAtMs, t).wait : undefined;
  const wait = view?.wait;
  return (
    <div
      className={`banner ${view?.tone ?? ""}`}
      data-testid={testId}
      data-error={refusal?.error ?? ""}
      data-over={view?.over ? "true" : undefined}
    >
      <p role="alert" className="banner-message" data-testid={`${testId}-message`}>
        {view ? view.reason : null}
        {wait && heard ? (
          <span className="sr-only">
            {" "}
            {heard.alternative
              ? t("banner.tryAgainInWithAlternative", { wait: heard.visible, alternative: heard.alternative })
              : heard.untilMs !== undefined
                ? rich(
                    "banner.tryAgainAt",
                    { time: clockTime(heard.untilMs, locale) },
                    { clock: (chunks) => <time dateTime={new Date(heard.untilMs!).toISOString()}>{chunks}</time> },
                  )
                : t("banner.tryAgainInFewSeconds")}
          </span>
        ) : null}
      </p>
      {wait ? (
        <p aria-hidden="true" className="banner-wait" data-testid={`${testId}-countdown`}>
          {rich(
            wait.alternative ? "banner.countdownWithAlternative" : "banner.countdown",
            { wait: wait.visible, alternative: wait.alternative ?? "" },
            { nowrap: (chunks) => <span className="nowrap">{chunks}</span> },
          )}
        </p>
      ) : null}
    </div>
  );
}

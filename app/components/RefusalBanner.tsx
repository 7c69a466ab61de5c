"use client";

import { useEffect, useState } from "react";

export type Refusal = {
  error: string;
  message: string;
  /** When the refusal ends (ms since the epoch), from Retry-After. */
  retryAtMs?: number;
};

/** Reads a refusal from a JSON error response, using Retry-After for its end. */
export async function refusalFrom(res: Response, nowMs = Date.now()): Promise<Refusal> {
  const body = (await res.json().catch(() => ({}))) as { error?: string; message?: string; retryAfterSeconds?: number };
  const header = Number(res.headers.get("Retry-After"));
  const seconds = Number.isFinite(header) && header > 0 ? header : body.retryAfterSeconds;
  return {
    error: body.error ?? "error",
    message: body.message ?? "Something went wrong. Try again.",
    retryAtMs: seconds ? nowMs + seconds * 1000 : undefined,
  };
}

function secondsLeft(refusal: Refusal | null, nowMs: number): number {
  return refusal?.retryAtMs ? Math.max(0, Math.ceil((refusal.retryAtMs - nowMs) / 1000)) : 0;
}

function clockTime(ms: number): string {
  return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

/**
 * Says why a request was refused and, for 429/503, counts down to when it may be retried.
 * The reason is announced once (role=alert); the ticking number is hidden from screen readers,
 * which instead hear the time at which trying again is possible.
 */
export function useCountdown(refusal: Refusal | null): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!refusal?.retryAtMs) return;
    const tick = () => setNow(Date.now());
    const first = setTimeout(tick, 0);
    const timer = setInterval(tick, 250);
    return () => {
      clearTimeout(first);
      clearInterval(timer);
    };
  }, [refusal]);
  return secondsLeft(refusal, now);
}

export function RefusalBanner({ refusal, remainingSeconds, testId }: { refusal: Refusal | null; remainingSeconds: number; testId: string }) {
  const timed = refusal?.retryAtMs !== undefined;
  const kind = refusal?.error === "rate_limited" || refusal?.error === "locked" || refusal?.error === "busy" ? "warn" : "error";
  return (
    <div className={`banner ${kind}`} role="alert" aria-live="assertive" data-testid={testId} data-error={refusal?.error ?? ""}>
      {refusal ? (
        <>
          {refusal.message}
          {refusal.error === "locked" && refusal.retryAtMs ? <> It resumes at {clockTime(refusal.retryAtMs)}.</> : null}
          {timed ? (
            remainingSeconds > 0 ? (
              <>
                {" "}
                <span aria-hidden="true" data-testid={`${testId}-countdown`}>
                  Try again in {remainingSeconds} s.
                </span>
                <span className="sr-only">You can try again at {clockTime(refusal.retryAtMs!)}.</span>
              </>
            ) : (
              <> You can try again now.</>
            )
          ) : null}
        </>
      ) : null}
    </div>
  );
}

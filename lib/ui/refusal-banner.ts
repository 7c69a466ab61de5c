import type { Translate } from "@/lib/i18n/i18n";

/**
 * What a form shows after the server refused an attempt: one sentence for the reason and one for
 * the wait, in words of the form's own, built from the refusal's `error` code and fields (see
 * lib/http/refusals.ts), in the page's language (`t`, the `banner`, `duration` and `messages`
 * namespaces). The server's `message` (already in the request's language) is used for codes without
 * words here. Pure: the clock and the words are parameters.
 */
export type Refusal = {
  error: string;
  /** The server's own sentence, for codes this module has no words for ("" when it sent none). */
  message: string;
  /** When the answer arrived: the countdown starts here, not when the page was loaded. */
  receivedAtMs: number;
  /** When trying again is possible, from Retry-After. */
  retryAtMs?: number;
  /** A lock seen from a browser the server does not know: Retry-After is rounded up, so say "about". */
  approximate?: boolean;
  /** New devices stay out until the owner signs in from a known one: no time to count down to. */
  capped?: boolean;
  /** Which limit refused: "username" is the per-email limit for this network, otherwise the network's own. */
  scope?: string;
};

export type FormKind = "sign-in" | "register" | "recovery";

export type RefusalView = {
  /** "ok" once the wait is over: "You can try again now." is good news, not a warning. */
  tone: "warn" | "error" | "ok";
  /** The sentence announced to screen readers when the refusal arrives, and when the wait ends. */
  reason: string;
  /** The wait, while it lasts. */
  wait?: {
    /** "2 min 49 s" or "about 5 minutes" (approximate): shown, ticking, hidden from screen readers. */
    visible: string;
    /** The same fact as a time of day, announced once with the reason; undefined for waits of a few seconds. */
    untilMs?: number;
    /** Appended to the wait sentence, e.g. the known-device way round a lock. */
    alternative?: string;
  };
  /** True once the wait is over: `reason` then says so instead of the reason. */
  over: boolean;
};

type Body = { error?: unknown; message?: unknown; retryAfterSeconds?: unknown; capped?: unknown; lockedUntil?: unknown; scope?: unknown };

/** A refusal from a JSON error response, Retry-After taking precedence over the body's own figure. */
export function refusalFromBody(body: Body, retryAfterHeader: string | null, receivedAtMs: number): Refusal {
  const header = Number(retryAfterHeader);
  const fromBody = typeof body.retryAfterSeconds === "number" ? body.retryAfterSeconds : undefined;
  const seconds = retryAfterHeader !== null && Number.isFinite(header) && header > 0 ? header : fromBody;
  const error = typeof body.error === "string" ? body.error : "error";
  return {
    error,
    message: typeof body.message === "string" ? body.message : "",
    receivedAtMs,
    retryAtMs: seconds && seconds > 0 ? receivedAtMs + seconds * 1000 : undefined,
    // Only a known device is told the exact end of its lock (lockedUntil); anyone else gets a rounded one.
    approximate: error === "locked" && typeof body.lockedUntil !== "string" ? true : undefined,
    capped: body.capped === true ? true : undefined,
    scope: typeof body.scope === "string" ? body.scope : undefined,
  };
}

/** Waits this short are not worth a time of day: "in a few seconds" says all there is. */
const FEW_SECONDS_MS = 10_000;

function reasonFor(refusal: Refusal, form: FormKind, t: Translate): string {
  switch (refusal.error) {
    case "rate_limited":
      if (form === "register") return t("banner.rateLimitedRegister");
      if (form === "recovery") return t("banner.rateLimitedRecovery");
      return refusal.scope === "username" ? t("banner.rateLimitedUsername") : t("banner.rateLimitedSignIn");
    case "locked":
      if (refusal.capped) return refusal.message || t("messages.accountSignInPaused");
      return refusal.approximate ? t("messages.accountSignInPaused") : t("messages.deviceSignInPaused");
    case "busy":
    case "unavailable":
      return t("banner.serverBusy");
    default:
      return refusal.message || t("messages.somethingWentWrong");
  }
}

export function describeRefusal(refusal: Refusal, form: FormKind, nowMs: number, t: Translate): RefusalView {
  // A wait, not a mistake of the person's: said in the warning tone.
  const tone = ["rate_limited", "locked", "busy", "unavailable"].includes(refusal.error) ? "warn" : "error";
  // A capped lock lasts until the owner acts: its message already says what to do, with no clock.
  if (refusal.retryAtMs === undefined || refusal.capped) return { tone, reason: reasonFor(refusal, form, t), over: false };
  const remainingMs = refusal.retryAtMs - nowMs;
  if (remainingMs <= 0) {
    const reason = refusal.error === "locked" ? t("banner.signInResumed") : t("banner.tryAgainNow");
    return { tone: "ok", reason, over: true };
  }
  const alternative = refusal.error === "locked" && refusal.approximate ? t("banner.orKnownDevice") : undefined;
  const visible = refusal.approximate ? aboutDuration(remainingMs, t) : formatDuration(remainingMs / 1000, t);
  const untilMs = refusal.retryAtMs - refusal.receivedAtMs > FEW_SECONDS_MS ? refusal.retryAtMs : undefined;
  return { tone, reason: reasonFor(refusal, form, t), wait: { visible, untilMs, alternative }, over: false };
}

/** Whole seconds left, rounded up: the button waits for the last of them. */
export function secondsLeft(refusal: Refusal | null, nowMs: number): number {
  return refusal?.retryAtMs && !refusal.capped ? Math.max(0, Math.ceil((refusal.retryAtMs - nowMs) / 1000)) : 0;
}

// Durations in plain words for the banners, in the page's language (the `duration` catalogue;
// numbers and plurals through Intl): exact ones count down ("2 min 49 s"), rounded ones say so
// ("about 5 minutes"). Pure, so the wording is tested without a browser.

/** "49 s", "2 min 49 s", "3 min", "1 h 5 min": whole seconds, largest unit first, never "0 min". */
export function formatDuration(totalSeconds: number, t: Translate): string {
  const seconds = Math.max(0, Math.ceil(totalSeconds));
  if (seconds < 60) return t("duration.seconds", { seconds });
  if (seconds < 3600) {
    const minutes = Math.floor(seconds / 60);
    const rest = seconds % 60;
    return rest === 0 ? t("duration.minutes", { minutes }) : t("duration.minutesSeconds", { minutes, seconds: rest });
  }
  // Past an hour the seconds are noise: round up to the minute, so the wait is never understated.
  const minutes = Math.ceil(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest === 0 ? t("duration.hours", { hours }) : t("duration.hoursMinutes", { hours, minutes: rest });
}

/** "about a minute", "about 5 minutes", "about an hour", "about 2 hours": for waits the server rounded. */
export function aboutDuration(ms: number, t: Translate): string {
  const minutes = Math.max(1, Math.round(ms / 60_000));
  if (minutes < 60) return t("duration.aboutMinutes", { minutes });
  return t("duration.aboutHours", { hours: Math.round(minutes / 60) });
}

import type { CaptchaOutcome } from "@/lib/captcha/altcha";
import type { LockoutCheck } from "@/lib/lockout/lockout-rules";
import type { LimitResult } from "@/lib/rate-limit/limiter";
import type { RefusalStyle } from "./route-policies";
import { NEW_PASSWORD_PATH } from "./page-paths";
import { jsonError } from "./responses";
import { sentence, type Sentence } from "@/lib/i18n/sentence";

/** Whole seconds, rounded up, at least 1: Retry-After takes no fractions and 0 invites a retry storm. */
export function retryAfterSeconds(retryAfterMs: number): number {
  return Math.max(1, Math.ceil(retryAfterMs / 1000));
}

function withRetryAfter(
  status: 429 | 503,
  error: "rate_limited" | "locked" | "busy" | "unavailable",
  message: Sentence,
  retryAfterMs: number,
  extra: Record<string, unknown> = {},
) {
  const seconds = retryAfterSeconds(retryAfterMs);
  return jsonError(status, error, message, { retryAfterSeconds: seconds, ...extra }, { "Retry-After": String(seconds) });
}

/**
 * `scope: "username"` says the per-username limit for this address refused, not the address's
 * own: the sign-in page can then name the email address. It is the same for every username, so
 * it says nothing about whether the account exists.
 */
export function rateLimited(result: LimitResult) {
  const extra = result.policy.name === "signInUsername" ? { scope: "username" } : {};
  return withRetryAfter(429, "rate_limited", sentence("refusals.rateLimited"), result.retryAfterMs, extra);
}

/**
 * A lock's end, coarsened for clients that present no known-device cookie: the exact moment a
 * lock lifts is the moment an attacker should strike again. Up to 10 minutes: whole minutes; up
 * to an hour: 5 minutes; beyond: 15 minutes. Always rounded up, so no retry comes early.
 */
export function coarseRetryAfterMs(retryAfterMs: number): number {
  const stepMs = retryAfterMs <= 600_000 ? 60_000 : retryAfterMs <= 3_600_000 ? 300_000 : 900_000;
  return Math.max(stepMs, Math.ceil(retryAfterMs / stepMs) * stepMs);
}

/** A rounded wait as the catalogue's "about …" takes it: about a minute, about 5 minutes, about 2 hours. */
function aboutMinutes(ms: number): { unit: "minutes" | "hours"; count: number } {
  const minutes = Math.round(ms / 60_000);
  if (minutes <= 1) return { unit: "minutes", count: 1 };
  if (minutes === 60) return { unit: "hours", count: 1 };
  return minutes > 60 ? { unit: "hours", count: Math.round(minutes / 60) } : { unit: "minutes", count: minutes };
}

type Locked = Extract<LockoutCheck, { locked: true }>;

/** The username-wide lock, as told to a client without a known-device cookie. */
export function untrustedLocked(check: Locked) {
  if (check.capped) {
    return withRetryAfter(429, "locked", sentence("refusals.lockedCapped"), check.retryAfterMs, { capped: true });
  }
  const retryAfterMs = coarseRetryAfterMs(check.retryAfterMs);
  return withRetryAfter(429, "locked", sentence("refusals.lockedUntrusted", aboutMinutes(retryAfterMs)), retryAfterMs);
}

/** A known device's own lock: its holder proved the device before, so the exact end is theirs to know. */
export function deviceLocked(check: Locked) {
  return withRetryAfter(429, "locked", sentence("messages.deviceSignInPaused"), check.retryAfterMs, {
    lockedUntil: new Date(check.lockedUntilMs).toISOString(),
  });
}

/** The second step's own lock: wrong codes for this account (or known device), told exactly: the password was right. */
export function secondFactorLocked(check: Locked) {
  return withRetryAfter(429, "locked", sentence("refusals.secondFactorLocked", aboutMinutes(check.retryAfterMs)), check.retryAfterMs);
}

export function captchaInvalid(outcome: Extract<CaptchaOutcome, { ok: false }>) {
  // The replay store is down: not the client's fault, so a 503 it may retry.
  if (outcome.reason === "unavailable") return withRetryAfter(503, "busy", sentence("captcha.unavailable"), 5_000);
  return jsonError(400, "captcha_invalid", sentence(`captcha.${outcome.reason}`), { reason: outcome.reason });
}

// Argon2id slots free up within a few hundred milliseconds; one second is a fair first retry.
export function busy(retryAfterMs = 1_000) {
  return withRetryAfter(503, "busy", sentence("refusals.busy"), retryAfterMs);
}

/**
 * 429 for API clients: Retry-After plus the IETF httpapi RateLimit-Policy / RateLimit fields
 * (draft-ietf-httpapi-ratelimit-headers), so a client can pace itself instead of guessing.
 * Each bandwidth of the policy is listed as a quota (q) per window (w, seconds).
 */
export function apiRateLimited(result: LimitResult) {
  const response = rateLimited(result);
  const { algorithm, name } = result.policy;
  const quotas =
    algorithm.kind === "token-bucket"
      ? algorithm.bandwidths.map((b, i) => ({ id: i === 0 ? name : `${name}-${i + 1}`, q: b.capacity, w: Math.ceil(b.periodMs / 1000) }))
      : [{ id: name, q: algorithm.limit, w: Math.ceil(algorithm.windowMs / 1000) }];
  response.headers.set("RateLimit-Policy", quotas.map((quota) => `"${quota.id}";q=${quota.q};w=${quota.w}`).join(", "));
  response.headers.set("RateLimit", `"${quotas[0]!.id}";r=${result.remaining};t=${retryAfterSeconds(result.retryAfterMs)}`);
  return response;
}

/**
 * The CSRF rule (lib/http/csrf.ts) refused: a cross-site post, or a page whose session has changed.
 * An API route (`api`) says how to call it instead: from the app, or with a Bearer token.
 */
export function csrfRefused(to: "page" | "api" = "page") {
  return jsonError(403, "csrf_invalid", sentence(to === "api" ? "refusals.crossSite" : "refusals.pageExpired"));
}

/**
 * The answer every other request of an account with a breached password gets, until a new one is
 * chosen; a sign-in's carries the device token it issued (`extra`).
 */
export function passwordChangeRequired(extra: Record<string, unknown> = {}) {
  return jsonError(403, "password_change_required", sentence("refusals.passwordChangeRequired", { path: NEW_PASSWORD_PATH }), {
    location: NEW_PASSWORD_PATH,
    ...extra,
  });
}

/** The password check could not finish (the database did not answer): nothing was decided. */
export function unavailable() {
  return withRetryAfter(503, "unavailable", sentence("messages.signInUnavailable"), 5_000);
}

/** A database or disk failure on any route (lib/auth/limited.ts): nothing was decided, come back soon. */
export function serviceUnavailable() {
  return withRetryAfter(503, "unavailable", sentence("refusals.serviceUnavailable"), 5_000);
}

/**
 * A fail-closed limit whose store did not answer: the client did nothing wrong, so not 429
 * "too many attempts" (which would send the owner looking for an attacker), but 503.
 */
export function limitStoreUnavailable(result: LimitResult) {
  return withRetryAfter(503, "unavailable", sentence("refusals.serviceUnavailable"), result.retryAfterMs);
}

/** Sign-out could not end the session's server record (the database did not answer). */
export function signOutUnavailable() {
  return withRetryAfter(503, "busy", sentence("refusals.signOutUnavailable"), 5_000);
}

/**
 * No trustworthy client address: the server was started without server.mjs (plain `next start`
 * cannot see the socket). One shared bucket would let one client refuse everybody, so refuse all.
 */
export function noClientAddress() {
  return jsonError(
    503,
    "misconfigured",
    "This server cannot see client addresses. Start it with server.mjs (npm start), not next start.",
    {},
    { "Retry-After": "60" },
  );
}

/** How each route style answers a refused limit (the route table names the style). */
export const REFUSE: Record<RefusalStyle, (result: LimitResult) => Response> = {
  browser: rateLimited,
  api: apiRateLimited,
  // Browsers neither retry nor show telemetry refusals: drop quietly.
  drop: () => new Response(null, { status: 204 }),
};

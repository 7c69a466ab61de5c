import type { CaptchaOutcome } from "@/lib/captcha/altcha";
import { CAPTCHA_MESSAGES } from "@/lib/captcha/altcha";
import type { LockoutCheck } from "@/lib/lockout/rules";
import type { LimitResult } from "@/lib/rate-limit/limiter";
import { jsonError } from "./responses";

/** Whole seconds, rounded up, at least 1: Retry-After takes no fractions and 0 invites a retry storm. */
export function retryAfterSeconds(retryAfterMs: number): number {
  return Math.max(1, Math.ceil(retryAfterMs / 1000));
}

function withRetryAfter(status: 429 | 503, error: "rate_limited" | "locked" | "busy", message: string, retryAfterMs: number, extra: Record<string, unknown> = {}) {
  const seconds = retryAfterSeconds(retryAfterMs);
  return jsonError(status, error, message, { retryAfterSeconds: seconds, ...extra }, { "Retry-After": String(seconds) });
}

export function rateLimited(result: LimitResult) {
  return withRetryAfter(429, "rate_limited", "Too many attempts from your network. Wait before trying again.", result.retryAfterMs);
}

export function locked(check: Extract<LockoutCheck, { locked: true }>) {
  return withRetryAfter(429, "locked", "Sign-in for this account is paused after repeated failed attempts.", check.retryAfterMs, {
    lockedUntil: new Date(check.lockedUntilMs).toISOString(),
  });
}

export function captchaInvalid(outcome: Extract<CaptchaOutcome, { ok: false }>) {
  // The replay store is down: not the client's fault, so a 503 it may retry.
  if (outcome.reason === "unavailable") return withRetryAfter(503, "busy", CAPTCHA_MESSAGES.unavailable, 5_000);
  return jsonError(400, "captcha_invalid", CAPTCHA_MESSAGES[outcome.reason], { reason: outcome.reason });
}

// Argon2id slots free up within a few hundred milliseconds; one second is a fair first retry.
export function busy() {
  return withRetryAfter(503, "busy", "The server is busy checking other passwords. Try again in a moment.", 1_000);
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
 * No trustworthy client address: the server was started without server.mjs (plain `next start`
 * cannot see the socket). One shared bucket would let one client refuse everybody, so refuse all.
 */
export function noClientAddress() {
  return jsonError(503, "misconfigured", "This server cannot see client addresses. Start it with server.mjs (npm start), not next start.", {}, { "Retry-After": "60" });
}

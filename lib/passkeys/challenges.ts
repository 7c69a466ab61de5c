import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { ReplayStore } from "@/lib/captcha/replay-store";

/**
 * WebAuthn challenges that need no table of their own: a challenge is `nonce.expiresAtMs.mac`,
 * where the MAC (HMAC-SHA-256 under this instance's secret) covers the nonce, the expiry, what the
 * challenge is for and whom it is bound to (a browser session for the account page's ceremonies,
 * nobody for a sign-in). Any instance with the secret can check one; the replay store (memory,
 * Redis or PostgreSQL, the ALTCHA's) makes each single-use, so a challenge spent on one instance
 * is spent on all.
 */
export type ChallengePurpose = "sign_in" | "register" | "reauthenticate" | "second_step";

export type ChallengeCheck = { ok: true } | { ok: false; reason: "malformed" | "forged" | "expired" | "replayed" };

const NONCE_BYTES = 32;

function mac(secret: string, purpose: ChallengePurpose, boundTo: string, nonce: string, expiresAtMs: number): string {
  return createHmac("sha256", secret).update(`passkey-challenge\0${purpose}\0${boundTo}\0${nonce}\0${expiresAtMs}`).digest("base64url");
}

/** A new challenge, as text (the WebAuthn options carry its UTF-8 bytes; the browser signs them base64url-encoded). */
export function issueChallenge(secret: string, purpose: ChallengePurpose, boundTo: string, nowMs: number, lifetimeMs: number): string {
  const nonce = randomBytes(NONCE_BYTES).toString("base64url");
  const expiresAtMs = nowMs + lifetimeMs;
  return `${nonce}.${expiresAtMs}.${mac(secret, purpose, boundTo, nonce, expiresAtMs)}`;
}

/**
 * Checks a challenge (as issued: the text, decoded from `clientDataJSON.challenge`) and spends it: signed by us, for this purpose and
 * binding, not expired, and never claimed before on any instance. Claimed before the signature of
 * the response is verified, so a failed attempt spends it too: every try needs a fresh challenge.
 */
export async function claimChallenge(
  secret: string,
  replays: ReplayStore,
  challenge: string,
  purpose: ChallengePurpose,
  boundTo: string,
  nowMs: number,
): Promise<ChallengeCheck> {
  if (challenge.length > 512) return { ok: false, reason: "malformed" };
  const parts = challenge.split(".");
  if (parts.length !== 3) return { ok: false, reason: "malformed" };
  const [nonce, expiry, signature] = parts as [string, string, string];
  const expiresAtMs = Number(expiry);
  if (!/^[A-Za-z0-9_-]{43}$/.test(nonce) || !Number.isSafeInteger(expiresAtMs)) return { ok: false, reason: "malformed" };
  const expected = Buffer.from(mac(secret, purpose, boundTo, nonce, expiresAtMs));
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: "forged" };
  if (expiresAtMs <= nowMs) return { ok: false, reason: "expired" };
  if (!(await replays.claim(`passkey:${nonce}`, expiresAtMs, nowMs))) return { ok: false, reason: "replayed" };
  return { ok: true };
}

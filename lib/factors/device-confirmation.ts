import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { openSecret, sealKeyOf, sealSecret } from "./sealed-secret";

/** NEW_DEVICE_CONFIRMATION: when a right password from a new device waits for a mailed code. */
export type DeviceConfirmationMode = "at-risk" | "always" | "off";

/** A username that failed a password check from an untrusted client this recently is under attack. */
export const AT_RISK_WINDOW_MS = 24 * 3_600_000;

/**
 * Whether a password attempt from a client with no known device waits for a mailed code whatever
 * the password turns out to be. It reads only when the username's untrusted-lane record last
 * failed before this attempt (kept for every username, with an account or not, and not cleared by
 * a success), so its answer, and the answer that follows, are the same for a wrong password, a
 * right one and an address with no account.
 */
export function confirmationDueBeforeCheck(mode: DeviceConfirmationMode, lastFailedAtMs: number | null, nowMs: number): boolean {
  if (mode === "off") return false;
  if (mode === "always") return true;
  return lastFailedAtMs !== null && nowMs - lastFailedAtMs < AT_RISK_WINDOW_MS;
}

/**
 * Every mailed code of one account within one window and under one seed is the same code
 * (docs/owner-lane.md, "One code per window"): a guest's sign-in at a staffer's username then
 * mails nothing the staffer could confuse with their own, and only the first code mail of a
 * window and seed needs sending, so nobody can spend the owner's code mails. The account's seed
 * is replaced when a pending sign-in is finished with the code (docs/decisions/0040): a code that
 * leaked serves no later sign-in. Wrong answers are bounded per address (`deviceCodeGuesses`).
 */
export const DEVICE_CODE_WINDOW_MS = 10 * 60_000;

export function deviceCodeWindow(nowMs: number): number {
  return Math.floor(nowMs / DEVICE_CODE_WINDOW_MS);
}

/**
 * The window's code, six digits: keyed by the code secret, so only the server can make it, and
 * by the account's random seed, so the secret and an account id alone make none; made again at
 * send time.
 */
export function windowDeviceCode(secret: string, userId: string, seed: string, window: number): string {
  const digest = createHmac("sha256", secret).update(`device-code-window:${userId}:${seed}:${window}`).digest();
  // 64 bits reduced to 10^6: the bias is below 10^-13.
  return String(digest.readBigUInt64BE(0) % 1_000_000n).padStart(6, "0");
}

/** A new seed for an account's device codes (the database gives each account its first). */
export function newDeviceCodeSeed(): string {
  return randomBytes(16).toString("base64url");
}

/**
 * A seed's name where the seed itself must not go (the mail spool, the limiter's keys): a
 * promise or a quota names the seed it was made under, and a replaced seed's promise sends nothing.
 */
export function deviceCodeSeedTag(secret: string, seed: string): string {
  return createHmac("sha256", secret).update(`device-code-seed:${seed}`).digest("base64url").slice(0, 22);
}

/**
 * The address that asked for a resend, by its keyed tag: the mail's promise names whose budget it
 * is charged to (deviceCodeResendAddress) without the spool holding the address itself.
 */
export function deviceCodeAskerTag(secret: string, clientKey: string): string {
  return createHmac("sha256", secret).update(`device-code-asker:${clientKey}`).digest("base64url").slice(0, 22);
}

/** Whether `codeDigest` is the code of this seed and window: false once the seed was replaced. */
export function codeOfSeed(secret: string, userId: string, seed: string, window: number, codeDigest: string | null): boolean {
  const expected = Buffer.from(deviceCodeDigest(secret, windowDeviceCode(secret, userId, seed, window)));
  const stored = Buffer.from(codeDigest ?? "");
  return expected.length === stored.length && timingSafeEqual(expected, stored);
}

/** A code's keyed digest: the table never holds a code a database reader could type in. */
export function deviceCodeDigest(secret: string, code: string): string {
  return createHmac("sha256", secret).update(`device-code:${code}`).digest("base64url");
}

/** Whether `code` is the one mailed; false for a stand-in (no digest), in the same time. */
export function deviceCodeMatches(secret: string, codeDigest: string | null, code: string): boolean {
  const given = Buffer.from(deviceCodeDigest(secret, code));
  const stored = Buffer.from(codeDigest ?? deviceCodeDigest(secret, "stand-in"));
  return timingSafeEqual(given, stored) && codeDigest !== null;
}

const ADDRESS_PURPOSE = "gatehouse pending address v1";

/**
 * The address a device confirmation was asked for, sealed for its row (AES-256-GCM, the username's
 * key as associated data): wrong codes on a stand-in lock the username, and its owner, if it has
 * one, is mailed the unlock link, so the row must name the address; a copy of the table alone does
 * not tell which addresses strangers tried.
 */
export function sealAddress(secret: string, usernameKey: string, email: string): string {
  return sealSecret(sealKeyOf(secret, ADDRESS_PURPOSE), Buffer.from(email), usernameKey);
}

/** The sealed address, or null for one this secret did not seal for this username. */
export function openAddress(secret: string, usernameKey: string, sealed: string | null): string | null {
  const opened = sealed === null ? null : openSecret(sealKeyOf(secret, ADDRESS_PURPOSE), sealed, usernameKey);
  return opened === null ? null : Buffer.from(opened).toString();
}

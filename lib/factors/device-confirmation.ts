import { createHmac, timingSafeEqual } from "node:crypto";
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
 * Every mailed code of one account within one window is the same code (docs/owner-lane.md,
 * "One code per window"): a guest's sign-in at a staffer's username then mails nothing the
 * staffer could confuse with their own, and only the window's first code mail needs sending, so
 * nobody can spend the owner's code mails. No more guessable than a random code: each pending
 * sign-in still takes 5 tries, and wrong codes count toward the username's lock.
 */
export const DEVICE_CODE_WINDOW_MS = 10 * 60_000;

export function deviceCodeWindow(nowMs: number): number {
  return Math.floor(nowMs / DEVICE_CODE_WINDOW_MS);
}

/**
 * The window's code, six digits: keyed by the code secret, so only the server can make it, and
 * made again at send time.
 */
export function windowDeviceCode(secret: string, userId: string, window: number): string {
  const digest = createHmac("sha256", secret).update(`device-code-window:${userId}:${window}`).digest();
  // 64 bits reduced to 10^6: the bias is below 10^-13.
  return String(digest.readBigUInt64BE(0) % 1_000_000n).padStart(6, "0");
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

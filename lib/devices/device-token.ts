import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * OWASP device cookies, as pure functions. A token is `<id>.<expiresAtSeconds>.<mac>.<doorMac>`: a
 * random 128-bit id, its expiry, an HMAC-SHA-256 over both and the username's key, and a shorter
 * HMAC over the id and expiry alone. The username is not in the token, so a token checks only
 * against the username it was issued for, and says nothing about whose it is. The door in front of
 * Next.js (lib/http/door.ts), which has no username, checks the second MAC: a made-up token costs it
 * no database read. Tokens issued before the second MAC (three parts) verify until they are replaced
 * at their next sign-in.
 */
export type DeviceToken = { id: string; expiresAtMs: number };

const ID = /^[A-Za-z0-9_-]{22}$/;
const MAC = /^[A-Za-z0-9_-]{43}$/;
const DOOR_MAC = /^[A-Za-z0-9_-]{22}$/;
// Anything longer than a real token is not read at all.
export const MAX_DEVICE_TOKEN_CHARS = 128;

function mac(secret: string, id: string, expiresAtSeconds: number, usernameKey: string): string {
  return createHmac("sha256", secret).update(`device:${id}.${expiresAtSeconds}.${usernameKey}`).digest("base64url");
}

/** 128 bits: the door only schedules by it, and every room behind it checks the full MAC. */
function doorMac(secret: string, id: string, expiresAtSeconds: number): string {
  return createHmac("sha256", secret).update(`device-door:${id}.${expiresAtSeconds}`).digest().subarray(0, 16).toString("base64url");
}

export function newDeviceId(): string {
  return randomBytes(16).toString("base64url");
}

export function signDeviceToken(secret: string, token: DeviceToken, usernameKey: string): string {
  const expiresAtSeconds = Math.floor(token.expiresAtMs / 1000);
  return `${token.id}.${expiresAtSeconds}.${mac(secret, token.id, expiresAtSeconds, usernameKey)}.${doorMac(secret, token.id, expiresAtSeconds)}`;
}

/**
 * The token's id when `value` is a well-formed, unexpired token signed for `usernameKey`; null
 * for anything else (absent, truncated, oversized, forged, expired, another username's).
 */
export function verifyDeviceToken(
  secret: string,
  value: string | null | undefined,
  usernameKey: string,
  nowMs: number,
): DeviceToken | null {
  const parts = partsOf(value, nowMs);
  if (!parts) return null;
  const { id, expiresAtSeconds, given, door } = parts;
  if (!sameText(mac(secret, id, expiresAtSeconds, usernameKey), given)) return null;
  // A token with a second MAC verifies only with the right one: no part of it goes unchecked.
  if (door !== null && !sameText(doorMac(secret, id, expiresAtSeconds), door)) return null;
  return { id, expiresAtMs: expiresAtSeconds * 1000 };
}

/**
 * For the door, which has no username: the id of a well-formed, unexpired token whose second MAC
 * holds, else null (three-part tokens, from before the second MAC, included). Says nothing about
 * whether the device still exists or whose it is.
 */
export function doorCheckedDeviceId(secret: string, value: string | null | undefined, nowMs: number): string | null {
  const parts = partsOf(value, nowMs);
  if (!parts || parts.door === null) return null;
  return sameText(doorMac(secret, parts.id, parts.expiresAtSeconds), parts.door) ? parts.id : null;
}

function partsOf(value: string | null | undefined, nowMs: number) {
  if (typeof value !== "string" || value.length > MAX_DEVICE_TOKEN_CHARS) return null;
  const [id = "", expires = "", given = "", door, ...rest] = value.split(".");
  if (rest.length > 0 || !ID.test(id) || !/^\d{1,12}$/.test(expires) || !MAC.test(given)) return null;
  if (door !== undefined && !DOOR_MAC.test(door)) return null;
  const expiresAtSeconds = Number(expires);
  if (expiresAtSeconds * 1000 <= nowMs) return null;
  return { id, expiresAtSeconds, given, door: door ?? null };
}

function sameText(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The id a token names, unverified: only to look up the row that says which username it claims. */
export function deviceIdOf(value: string | null | undefined): string | null {
  if (typeof value !== "string" || value.length > MAX_DEVICE_TOKEN_CHARS) return null;
  const id = value.split(".", 1)[0] ?? "";
  return ID.test(id) ? id : null;
}

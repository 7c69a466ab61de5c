import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * OWASP device cookies, as pure functions. A token is `<id>.<expiresAtSeconds>.<mac>`: a random
 * 128-bit id, its expiry, and an HMAC-SHA-256 over both and the username's key. The username is
 * not in the token, so a token checks only against the username it was issued for, and says
 * nothing about whose it is.
 */
export type DeviceToken = { id: string; expiresAtMs: number };

const ID = /^[A-Za-z0-9_-]{22}$/;
const MAC = /^[A-Za-z0-9_-]{43}$/;
// Anything longer than a real token is not read at all.
export const MAX_DEVICE_TOKEN_CHARS = 96;

function mac(secret: string, id: string, expiresAtSeconds: number, usernameKey: string): string {
  return createHmac("sha256", secret).update(`device:${id}.${expiresAtSeconds}.${usernameKey}`).digest("base64url");
}

export function newDeviceId(): string {
  return randomBytes(16).toString("base64url");
}

export function signDeviceToken(secret: string, token: DeviceToken, usernameKey: string): string {
  const expiresAtSeconds = Math.floor(token.expiresAtMs / 1000);
  return `${token.id}.${expiresAtSeconds}.${mac(secret, token.id, expiresAtSeconds, usernameKey)}`;
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
  if (typeof value !== "string" || value.length > MAX_DEVICE_TOKEN_CHARS) return null;
  const [id = "", expires = "", given = "", ...rest] = value.split(".");
  if (rest.length > 0 || !ID.test(id) || !/^\d{1,12}$/.test(expires) || !MAC.test(given)) return null;
  const expiresAtSeconds = Number(expires);
  if (expiresAtSeconds * 1000 <= nowMs) return null;
  const expected = Buffer.from(mac(secret, id, expiresAtSeconds, usernameKey));
  if (!timingSafeEqual(expected, Buffer.from(given))) return null;
  return { id, expiresAtMs: expiresAtSeconds * 1000 };
}

/** The id a token names, unverified: only to look up the row that says which username it claims. */
export function deviceIdOf(value: string | null | undefined): string | null {
  if (typeof value !== "string" || value.length > MAX_DEVICE_TOKEN_CHARS) return null;
  const id = value.split(".", 1)[0] ?? "";
  return ID.test(id) ? id : null;
}

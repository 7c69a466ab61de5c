import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The CSRF token of the account page's forms: an HMAC of the browser session's id, so it needs
 * no cookie of its own, works without JavaScript, and is worth nothing for another session
 * (OWASP's HMAC-based synchronizer token). Routes check it beside Sec-Fetch-Site/Origin.
 */
export function sessionFormToken(secret: string, sid: string): string {
  return createHmac("sha256", secret).update(`gatehouse:account-form:${sid}`).digest("base64url");
}

export function isSessionFormToken(secret: string, sid: string, presented: unknown): boolean {
  if (typeof presented !== "string" || presented.length > 128) return false;
  const expected = Buffer.from(sessionFormToken(secret, sid));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

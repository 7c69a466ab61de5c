import { randomBytes } from "node:crypto";

/**
 * Opaque bearer tokens (refresh tokens, email links): 32 random bytes, base64url (43 characters).
 * Tables hold only their digest (tokenDigest in ./digest.ts).
 */
const TOKEN_BYTES = 32;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newOpaqueToken(): string {
  return randomBytes(TOKEN_BYTES).toString("base64url");
}

/** Whether `token` has the shape of one of ours; anything else is unknown without a lookup. */
export function isWellFormedOpaqueToken(token: string): boolean {
  return TOKEN_PATTERN.test(token);
}

import { createHash, randomBytes } from "node:crypto";

/**
 * Opaque bearer tokens (refresh tokens, email links): 32 random bytes, base64url (43 characters).
 * Tables hold only the SHA-256 digest: a fast hash is right for a 256-bit random secret, which
 * cannot be guessed, so a slow hash would add cost and no protection. A database leak then
 * yields no usable token.
 */
const TOKEN_BYTES = 32;
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newOpaqueToken(): string {
  return randomBytes(TOKEN_BYTES).toString("base64url");
}

/** SHA-256 hex of a presented token: the only form in which it is stored or looked up. */
export function opaqueTokenDigest(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** Whether `token` has the shape of one of ours; anything else is unknown without a lookup. */
export function isWellFormedOpaqueToken(token: string): boolean {
  return TOKEN_PATTERN.test(token);
}

import { randomBytes, createHash } from "node:crypto";
import { z } from "zod";

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

/**
 * SHA-256 hex of a presented opaque token (refresh or download): the only form in which one is
 * stored or looked up. A fast hash is right here, because a 256-bit random secret cannot be
 * guessed, so a slow hash would add cost and no protection. A database leak then yields no usable token.
 */
export function tokenDigest(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** Any 8-4-4-4-12 hex id, as PostgreSQL's uuid type takes it (z.uuid() would also demand an RFC variant). */
export const uuidSchema = z.guid();

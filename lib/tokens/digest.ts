import { createHash } from "node:crypto";
import { z } from "zod";

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

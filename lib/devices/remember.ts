import { createHash, randomBytes } from "node:crypto";

/**
 * "Remember this browser", as pure functions: the browser keeps a random 256-bit secret in its own
 * cookie, and the known device's row keeps only its SHA-256 (a database reader cannot make the
 * cookie from it). A grant holds only beside the device cookie of the very row that stores its
 * digest (docs/decisions/0033).
 */
export type RememberGrant = { digest: string; untilMs: number };

/** A grant's secret and what the row stores of it. */
export type NewRemember = { secret: string; grant: RememberGrant };

const SECRET = /^[A-Za-z0-9_-]{43}$/;

export function rememberDigest(secret: string): string {
  return createHash("sha256").update(`remember:${secret}`).digest("base64url");
}

export function newRemember(untilMs: number): NewRemember {
  const secret = randomBytes(32).toString("base64url");
  return { secret, grant: { digest: rememberDigest(secret), untilMs } };
}

/** The digest of a well-formed secret; null for anything else (absent, oversized, not ours). */
export function rememberDigestOf(value: string | null | undefined): string | null {
  return typeof value === "string" && SECRET.test(value) ? rememberDigest(value) : null;
}

import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * An authenticator app's secret at rest: AES-256-GCM under a key derived (HKDF-SHA-256) from the
 * instance's factor secret for this one purpose, with the account id as associated data, so a
 * sealed secret copied onto another account's row does not open. A copy of the database alone
 * does not give away anyone's codes.
 */
const IV_BYTES = 12;
const TAG_BYTES = 16;

export type SealKey = Buffer;

/** The key for one purpose (HKDF's info): an app's secret by default; a key of one purpose opens nothing of another's. */
export function sealKeyOf(factorSecret: string, purpose = "gatehouse totp secret v1"): SealKey {
  return Buffer.from(hkdfSync("sha256", factorSecret, Buffer.alloc(0), purpose, 32));
}

/** `base64url(iv ‖ ciphertext ‖ tag)`. */
export function sealSecret(key: SealKey, secret: Uint8Array, userId: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(userId));
  const body = Buffer.concat([cipher.update(secret), cipher.final()]);
  return Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url");
}

/** The secret, or null for anything this key did not seal for this account (tampered, foreign, rotated key). */
export function openSecret(key: SealKey, sealed: string, userId: string): Uint8Array | null {
  const bytes = Buffer.from(sealed, "base64url");
  if (bytes.length <= IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(userId));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    return new Uint8Array(Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]));
  } catch {
    return null;
  }
}

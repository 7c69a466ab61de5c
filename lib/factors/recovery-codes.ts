import { createHmac, randomInt } from "node:crypto";

/**
 * Recovery codes: ten per account, shown once, each good once, stored only as an HMAC digest
 * (under a key derived for this purpose) so a copy of the database cannot be typed in.
 * A code is ten characters of Crockford's base32 (no i, l, o or u to misread), 50 bits,
 * written `k7rq2-9xw4m`; it is read back case-blind, with or without the dash, and with the
 * letters people confuse (o→0, i and l→1) mapped as Crockford says.
 */
export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
const CHARACTERS = 10;

export const RECOVERY_CODE_PATTERN = /^[0-9a-z]{5}-?[0-9a-z]{5}$/i;

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    let code = "";
    for (let i = 0; i < CHARACTERS; i++) code += ALPHABET[randomInt(ALPHABET.length)];
    return `${code.slice(0, 5)}-${code.slice(5)}`;
  });
}

/** The canonical form of what someone typed, or null when it cannot be a recovery code. */
export function canonicalRecoveryCode(typed: string): string | null {
  const trimmed = typed.trim();
  if (!RECOVERY_CODE_PATTERN.test(trimmed)) return null;
  const plain = trimmed.replace("-", "").toLowerCase().replace(/o/g, "0").replace(/[il]/g, "1");
  return [...plain].every((character) => ALPHABET.includes(character)) ? plain : null;
}

/** The stored form: HMAC-SHA-256 over the account and the canonical code. */
export function recoveryCodeDigest(key: string, userId: string, canonical: string): string {
  return createHmac("sha256", key).update(`recovery-code\0${userId}\0${canonical}`).digest("base64url");
}

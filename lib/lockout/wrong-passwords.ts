import { createHmac } from "node:crypto";

/** 64 bits: two wrong passwords of one client all but never collide, and the column stays small. */
const FINGERPRINT_BYTES = 8;

/**
 * Whose wrong password it was: the username's lock key and the client that sent it (an untrusted
 * client's address key, or a known device's own lock key). A fingerprint matches only a repeat
 * from that same client, so nobody elsewhere can learn what the owner's phone sent.
 */
export type FingerprintScope = { usernameKey: string; clientKey: string };

/**
 * A wrong password's fingerprint: HMAC-SHA-256 under a secret of its own, truncated to 64 bits.
 * The key is the protection: without it a stolen table gives nothing to test guesses against.
 * (With it, a dictionary could be tried like against any fast hash: hence only wrong passwords,
 * a few per client, cleared by the owner's success and gone with the streak; docs/decisions/0019.)
 * The fields before the password are digests and addresses, which hold no NUL, so the input
 * cannot be read two ways. NFC, as the hasher compares passwords.
 */
export function wrongPasswordFingerprint(secret: string, scope: FingerprintScope, password: string): string {
  return createHmac("sha256", secret)
    .update(`wrong-password\0${scope.usernameKey}\0${scope.clientKey}\0`)
    .update(password.normalize("NFC"))
    .digest()
    .subarray(0, FINGERPRINT_BYTES)
    .toString("base64url");
}

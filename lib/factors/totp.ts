import { Secret, TOTP } from "otpauth";

/**
 * An authenticator app's codes (RFC 6238): HMAC-SHA-1, 30-second steps, 6 digits, as every
 * authenticator app reads an `otpauth://` URI without asking. A code is good for the step it was
 * made in and one step either side (clock drift), and then only once: the caller stores the step
 * it accepted and refuses any step not after it (lib/factors/store.ts).
 */
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps accepted either side of now: RFC 6238 §5.2 recommends at most one. */
export const TOTP_DRIFT_STEPS = 1;
/** 160 bits, RFC 4226 §4's recommended secret length. */
const SECRET_BYTES = 20;

export const TOTP_CODE_PATTERN = /^\d{6}$/;

export function newTotpSecret(): Uint8Array {
  return new Uint8Array(new Secret({ size: SECRET_BYTES }).bytes);
}

export function base32Of(secret: Uint8Array): string {
  return new Secret({ buffer: toArrayBuffer(secret) }).base32;
}

/** The secret as people type it: base32 in groups of four ("JBSW Y3DP …"). */
export function groupsOfFour(base32: string): string {
  return base32.replace(/(.{4})(?=.)/g, "$1 ");
}

function totp(secret: Uint8Array, options: { issuer?: string; label?: string; digits?: number } = {}): TOTP {
  return new TOTP({
    issuer: options.issuer ?? "",
    label: options.label ?? "",
    algorithm: "SHA1",
    digits: options.digits ?? TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
    secret: new Secret({ buffer: toArrayBuffer(secret) }),
  });
}

/** The `otpauth://totp/Issuer:account?…` URI a QR code carries. */
export function totpUri(secret: Uint8Array, issuer: string, account: string): string {
  return totp(secret, { issuer, label: account }).toString();
}

/** The 30-second step that `atMs` falls in. */
export function totpStepAt(atMs: number): number {
  return TOTP.counter({ period: TOTP_PERIOD_SECONDS, timestamp: atMs });
}

/** The code for `atMs` (tests, and RFC 6238's vectors with `digits: 8`). */
export function totpCodeAt(secret: Uint8Array, atMs: number, digits = TOTP_DIGITS): string {
  return totp(secret, { digits }).generate({ timestamp: atMs });
}

/**
 * The step a code belongs to, within the drift window around `nowMs`, or null. The comparison
 * runs in constant time inside otpauth; which step matched decides the replay check.
 */
export function matchingStep(secret: Uint8Array, code: string, nowMs: number): number | null {
  if (!TOTP_CODE_PATTERN.test(code)) return null;
  const delta = totp(secret).validate({ token: code, timestamp: nowMs, window: TOTP_DRIFT_STEPS });
  return delta === null ? null : totpStepAt(nowMs) + delta;
}

function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

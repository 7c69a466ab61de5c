/**
 * The signature counter rule of WebAuthn (Level 3, §7.2 step 22): when either the stored or the
 * reported count is non-zero, the reported one must be greater, or the credential may have been
 * cloned. Synced passkeys report 0 every time and pass.
 */
export function counterVerdict(storedCount: number, reportedCount: number): "ok" | "regressed" {
  if (storedCount === 0 && reportedCount === 0) return "ok";
  return reportedCount > storedCount ? "ok" : "regressed";
}

// Controls, and the format characters that reorder or hide text (bidi overrides, zero-width):
// a name is shown in lists and mails, where "(remove me)" must not be made to read backwards.
const UNSHOWABLE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/;

/** A passkey's name as the owner gives it: trimmed, single-spaced, 1 to 60 characters. */
export function passkeyName(raw: string): string | null {
  const name = raw.normalize("NFC").replace(/\s+/g, " ").trim();
  return name.length >= 1 && name.length <= 60 && !UNSHOWABLE.test(name) ? name : null;
}

/** ASVS 5.0 7.5.1: what changes how the account is protected needs an authentication this recent. */
export const FRESH_AUTHENTICATION_MS = 10 * 60_000;

export function isFreshAuthentication(authenticatedAtMs: number, nowMs: number, windowMs = FRESH_AUTHENTICATION_MS): boolean {
  return nowMs - authenticatedAtMs <= windowMs && authenticatedAtMs <= nowMs + 60_000;
}

/** Why no browser will make or use a passkey at this public origin. */
export type PasskeyObstacle = "ip_address" | "insecure_origin";

/**
 * Null when browsers can make passkeys at `origin`; else why not. WebAuthn's RP ID is a domain
 * name, never an IP address (Chromium: "This is an invalid domain"), and it runs only in a secure
 * context: https, or http at localhost (and *.localhost).
 */
export function passkeyObstacle(origin: string): PasskeyObstacle | null {
  const { protocol, hostname } = new URL(origin);
  if (/^\[.*\]$/.test(hostname) || /^\d{1,3}(\.\d{1,3}){3}$/.test(hostname)) return "ip_address";
  const local = hostname === "localhost" || hostname.endsWith(".localhost");
  return protocol === "https:" || (protocol === "http:" && local) ? null : "insecure_origin";
}

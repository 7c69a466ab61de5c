/**
 * The length limits of credentials, in a module of their own with no imports, so the browser's
 * checks (lib/ui/field-checks.ts) can use them without bundling zod (about 30 kB compressed).
 * lib/auth/credentials.ts re-exports them for the server's schemas.
 */
// NIST SP 800-63B-4 §3.1.1.2: 15 for a password that is the only factor, 8 when it is one of two.
export const PASSWORD_MIN_LENGTH = 15;
export const PASSWORD_MIN_LENGTH_WITH_OTHER_FACTOR = 8;
export const PASSWORD_MAX_LENGTH = 128;
export const EMAIL_MAX_LENGTH = 254;

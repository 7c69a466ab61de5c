/**
 * The length limits of credentials, in a module of their own with no imports, so the browser's
 * checks (lib/ui/field-checks.ts) can use them without bundling zod (about 30 kB compressed).
 * lib/auth/credentials.ts re-exports them for the server's schemas.
 */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 128;
export const EMAIL_MAX_LENGTH = 254;

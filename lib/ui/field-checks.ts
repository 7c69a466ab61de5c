// The server's own limits (lib/auth/credentials.ts re-exports them for its schemas), from the
// module without zod. When the password rules move (lib/password/rules.ts), only this import
// changes: keep it free of zod and of any dictionary, or the pages carry them.
import { EMAIL_MAX_LENGTH, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "@/lib/auth/limits";

/**
 * Checks the browser makes before the round trip, so a typo costs neither a proof of work nor
 * one of the address's registrations. The server checks again: these only catch what it would
 * certainly refuse, with its own words, and never refuse what it would accept.
 */
export type FieldName = "email" | "password";
export type FieldErrors = Partial<Record<FieldName, string>>;

// Loose on purpose: something@something.something with no spaces. The server's check is stricter.
const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function checkEmail(raw: string): string | undefined {
  const email = raw.trim();
  if (email === "") return "Email is required.";
  if (!EMAIL_SHAPE.test(email)) return "Enter a valid email address.";
  if ([...email.normalize("NFKC")].length > EMAIL_MAX_LENGTH) return "That email address is too long.";
  return undefined;
}

/** Registration: the password rules too, counted in code points like the server. */
export function checkRegistration(email: string, password: string): FieldErrors {
  const errors: FieldErrors = {};
  const emailError = checkEmail(email);
  if (emailError) errors.email = emailError;
  const length = [...password].length;
  if (length === 0) errors.password = "Password is required.";
  else if (length < PASSWORD_MIN_LENGTH) errors.password = `Use at least ${PASSWORD_MIN_LENGTH} characters.`;
  else if (length > PASSWORD_MAX_LENGTH) errors.password = `Use at most ${PASSWORD_MAX_LENGTH} characters.`;
  return errors;
}

/**
 * Sign-in: only that both are there and the email has a shape. Like the server, it applies no
 * password rule: an account made under older rules must still be able to sign in.
 */
export function checkSignIn(email: string, password: string): FieldErrors {
  const errors: FieldErrors = {};
  const emailError = checkEmail(email);
  if (emailError) errors.email = emailError;
  if (password === "") errors.password = "Password is required.";
  return errors;
}

export const PASSWORD_LIMITS = { min: PASSWORD_MIN_LENGTH, max: PASSWORD_MAX_LENGTH } as const;

/** The first field with an error, in the order the form shows them: where focus goes. */
export function firstInvalid(errors: FieldErrors): FieldName | undefined {
  return (["email", "password"] as const).find((name) => errors[name]);
}

import { z } from "zod";
import { validTimeZone } from "@/lib/i18n/format";
import { isCommonPassword } from "@/lib/password/server-guesses";
import {
  minimumGuessesLog10,
  minimumPasswordLength,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
  passwordProblem,
  type PasswordProblem,
} from "@/lib/password/password-rules";
import { serverGuessEstimate } from "@/lib/password/server-guesses";
import { EMAIL_MAX_LENGTH } from "@/lib/password/lengths";

export { EMAIL_MAX_LENGTH, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH };

/** NFKC, trimmed, lower-cased: "Alice@Example.com " and "alice@example.com" are one account. */
export function normalizeEmail(email: string): string {
  return email.normalize("NFKC").trim().toLowerCase();
}

// C0 controls and DEL have no place in an address, and PostgreSQL refuses a NUL outright.
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * A new password's shape, the one field registration, reset and change all parse it with; the
 * rules (newPasswordRules) follow once the owner is known. The bound only keeps a huge string
 * from being normalised and scanned; the rules say "at most 128".
 */
export const newPasswordField = z
  .string({ error: "Enter a password." })
  .max(PASSWORD_MAX_LENGTH * 8, `Use at most ${PASSWORD_MAX_LENGTH} characters.`);

/**
 * A password checked against the account's hash ("confirm it's you", the current one at a change,
 * the one an address-verification link asks for): its shape only. The new-password rules here
 * would tell an attacker which guesses cannot be right without paying for a verification.
 * `emptyMessage`: what the form says when it is missing or empty.
 */
export function typedPasswordField(emptyMessage: string) {
  return z
    .string({ error: emptyMessage })
    .min(1, emptyMessage)
    .max(PASSWORD_MAX_LENGTH * 4);
}

/** Whose new password it is: the email it may not contain, and whether the password is the account's only factor. */
export type NewPasswordOwner = { email: string | undefined; hasOtherFactor: boolean };

/**
 * The password rules on the server (lib/password/password-rules.ts, the browser's too): the length for this
 * account, the blocklist and zxcvbn-ts's guess estimate with the email as a known word.
 */
export function newPasswordRules(password: string, owner: NewPasswordOwner): PasswordProblem | null {
  return passwordProblem(password, {
    email: owner.email,
    isCommon: isCommonPassword,
    minLength: minimumPasswordLength(owner),
    minGuessesLog10: minimumGuessesLog10(owner),
    estimate: serverGuessEstimate(password, owner.email),
  });
}

/** A new address (registration, "Change email"): normalised as every stored address, then checked. */
export const newEmailField = z
  .string({ error: "Email is required." })
  .max(EMAIL_MAX_LENGTH * 2, "That email address is too long.")
  .transform(normalizeEmail)
  .pipe(z.email({ error: "Enter a valid email address." }).max(EMAIL_MAX_LENGTH, "That email address is too long."));

// The ALTCHA payload is checked by the captcha layer; here only its size is bounded.
const altcha = z.string().max(8_192).optional();

// A new account has no other factor yet: the full length applies. The breach check follows the ALTCHA (lib/auth/new-password.ts).
// The browser's time zone, for the account's mails: a hint, so a bad one is dropped, never refused.
const timeZone = z.unknown().optional().transform(validTimeZone);

const email = newEmailField;

export const registrationSchema = z.object({ email, password: newPasswordField, altcha, timeZone }).superRefine((input, ctx) => {
  const problem = newPasswordRules(input.password, { email: input.email, hasOtherFactor: false });
  if (problem) ctx.addIssue({ code: "custom", path: ["password"], message: problem.message });
});

/**
 * Sign-in only checks shape: applying the registration rules here would tell an attacker
 * which guesses cannot be right without paying for a verification.
 */
export const signInSchema = z.object({
  email: z
    .string()
    .min(1, "Email is required.")
    .max(EMAIL_MAX_LENGTH * 2)
    .refine((value) => !CONTROL.test(value), "Enter a valid email address.")
    .transform(normalizeEmail),
  password: z
    .string()
    .min(1, "Password is required.")
    .max(PASSWORD_MAX_LENGTH * 4),
  altcha,
});

export type SignInInput = z.infer<typeof signInSchema>;

/** The API's sign-in: the sign-in fields and the `device_token` a previous sign-in returned. */
export const apiSignInSchema = signInSchema.extend({
  device_token: z.string().max(512).optional(),
});

/**
 * The browser's sign-in form: the sign-in fields plus where to go next and `json` (answer with the
 * URL instead of a redirect). Other fields are dropped (an old page's `csrfToken` among them).
 */
export const browserSignInSchema = signInSchema.extend({
  callbackUrl: z.string().max(2048).optional(),
  json: z.literal("true").optional(),
});

/** The sign-out form; its `formToken` is read by the CSRF rule (lib/http/csrf.ts), not here. */
export const signOutSchema = z.object({
  callbackUrl: z.string().max(2048).optional(),
  json: z.literal("true").optional(),
});

/** `{ field: firstMessage }` for a 400 body. */
export function fieldErrors(error: z.ZodError): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const issue of error.issues) {
    const key = String(issue.path[0] ?? "body");
    fields[key] ??= issue.message;
  }
  return fields;
}

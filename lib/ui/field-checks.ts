// The server's own limits, from a module without zod or a dictionary (keep it so, or the pages
// carry them). The password rules are in ./password-checks.ts: the sign-in page needs none.
import { EMAIL_MAX_LENGTH } from "@/lib/password/lengths";
import type { Translate } from "@/lib/i18n/i18n";

/**
 * Checks the browser makes before the round trip, so a typo costs neither a proof of work nor
 * one of the address's registrations. The server checks again: these only catch what it would
 * certainly refuse, with its own words (the `fields` catalogue, in the page's language), and never
 * refuse what it would accept.
 */
export type FieldName = "email" | "password";
export type FieldErrors = Partial<Record<FieldName, string>>;

// Loose on purpose: something@something.something with no spaces. The server's check is stricter.
const EMAIL_SHAPE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function checkEmail(raw: string, t: Translate): string | undefined {
  const email = raw.trim();
  if (email === "") return t("fields.emailRequired");
  if (!EMAIL_SHAPE.test(email)) return t("fields.emailInvalid");
  if ([...email.normalize("NFKC")].length > EMAIL_MAX_LENGTH) return t("fields.emailTooLong");
  return undefined;
}

/**
 * Sign-in: only that both are there and the email has a shape. Like the server, it applies no
 * password rule: an account made under older rules must still be able to sign in.
 */
export function checkSignIn(email: string, password: string, t: Translate): FieldErrors {
  const errors: FieldErrors = {};
  const emailError = checkEmail(email, t);
  if (emailError) errors.email = emailError;
  if (password === "") errors.password = t("fields.passwordRequired");
  return errors;
}

/** The first field with an error, in the order the form shows them: where focus goes. */
export function firstInvalid(errors: FieldErrors): FieldName | undefined {
  return (["email", "password"] as const).find((name) => errors[name]);
}

/**
 * The errors still true after an edit: a field keeps its error only while `now` (the same check
 * on the form as it is now) still finds one, in today's words. Fields never reported stay quiet
 * until the next submit, so typing is not interrupted by complaints about a half-typed value.
 */
export function stillWrong<Name extends string>(
  shown: Partial<Record<Name, string>>,
  now: Partial<Record<Name, string>>,
): Partial<Record<Name, string>> {
  const kept: Partial<Record<Name, string>> = {};
  for (const name of Object.keys(shown) as Name[]) if (shown[name] && now[name]) kept[name] = now[name];
  return kept;
}

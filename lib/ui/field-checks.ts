// The server's own limits and rules, from modules without zod or a dictionary (keep them so, or
// the pages carry them): lib/auth/limits.ts and lib/password/rules.ts.
import { EMAIL_MAX_LENGTH, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, PASSWORD_MIN_LENGTH_WITH_OTHER_FACTOR } from "@/lib/auth/limits";
import { passwordProblem, PASSWORD_MAX_LENGTH as MAX, type PasswordProblem } from "@/lib/password/rules";
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

function checkEmail(raw: string, t: Translate): string | undefined {
  const email = raw.trim();
  if (email === "") return t("fields.emailRequired");
  if (!EMAIL_SHAPE.test(email)) return t("fields.emailInvalid");
  if ([...email.normalize("NFKC")].length > EMAIL_MAX_LENGTH) return t("fields.emailTooLong");
  return undefined;
}

const PATTERN_KEYS = new Set(["spatial", "sequence", "date", "regex", "repeat", "dictionary"]);

/** A password rule's sentence in the page's language (the server says the same in the request's). */
export function problemText(problem: PasswordProblem, t: Translate, minLength: number, patterns: readonly string[] = []): string {
  switch (problem.rule) {
    case "too_short":
      return t("fields.tooShort", { minLength });
    case "too_long":
      return t("fields.tooLong", { maxLength: MAX });
    case "repetitive":
      return t("fields.repetitive");
    case "contains_email":
      return t("fields.containsEmail");
    case "common":
      return t("fields.common");
    case "guessable": {
      const named = [...new Set(patterns.filter((p) => PATTERN_KEYS.has(p)))].map((p) => t(`fields.pattern.${p}`));
      return named.length > 0 ? t("fields.guessableNamed", { patterns: named.join(", ") }) : t("fields.guessable");
    }
    default:
      return problem.message;
  }
}

/**
 * A new password: the server's rules, in its words, at the account's minimum length (15 unless
 * the page knows of another factor); the blocklist and the guess estimate are left to the server
 * (and the meter, once zxcvbn-ts has loaded).
 */
export function checkNewPassword(
  password: string,
  email: string | undefined,
  t: Translate,
  minLength = PASSWORD_MIN_LENGTH,
): string | undefined {
  if (password === "") return t("fields.passwordRequired");
  const problem = passwordProblem(password, { email, isCommon: () => false, minLength });
  return problem ? problemText(problem, t, minLength) : undefined;
}

/** Registration: the password rules too, counted in code points like the server. */
export function checkRegistration(email: string, password: string, t: Translate): FieldErrors {
  const errors: FieldErrors = {};
  const emailError = checkEmail(email, t);
  if (emailError) errors.email = emailError;
  const passwordError = checkNewPassword(password, emailError ? undefined : email.trim(), t);
  if (passwordError) errors.password = passwordError;
  return errors;
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

export const PASSWORD_LIMITS = {
  min: PASSWORD_MIN_LENGTH,
  minWithOtherFactor: PASSWORD_MIN_LENGTH_WITH_OTHER_FACTOR,
  max: PASSWORD_MAX_LENGTH,
} as const;

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

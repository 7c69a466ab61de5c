// The server's own limits and rules, from modules without zod or a dictionary (keep them so, or
// the pages carry them): lib/password/lengths.ts and lib/password/password-rules.ts.
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, PASSWORD_MIN_LENGTH_WITH_OTHER_FACTOR } from "@/lib/password/lengths";
import type { Translate } from "@/lib/i18n/i18n";
import { passwordProblem, type PasswordProblem } from "@/lib/password/password-rules";
import { checkEmail, type FieldErrors } from "./field-checks";

/**
 * The checks of a new password the browser makes before the round trip (registration, a reset,
 * a change), in the server's words and the page's language. Apart from the sign-in checks
 * (./field-checks.ts), so the sign-in page carries no password rules.
 */

const PATTERN_KEYS = new Set(["spatial", "sequence", "date", "regex", "repeat", "dictionary"]);

/** A password rule's sentence in the page's language (the server says the same in the request's). */
export function problemText(problem: PasswordProblem, t: Translate, minLength: number, patterns: readonly string[] = []): string {
  switch (problem.rule) {
    case "too_short":
      return t("fields.tooShort", { minLength });
    case "too_long":
      return t("fields.tooLong", { maxLength: PASSWORD_MAX_LENGTH });
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

export const PASSWORD_LIMITS = {
  min: PASSWORD_MIN_LENGTH,
  minWithOtherFactor: PASSWORD_MIN_LENGTH_WITH_OTHER_FACTOR,
  max: PASSWORD_MAX_LENGTH,
} as const;

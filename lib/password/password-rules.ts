/**
 * The password rules, in one module that both the server and the browser load (no Node APIs, no
 * dictionary of its own: the blocklist and the guess estimate are passed in, so the page can load
 * them lazily). The server's answer is the one that counts. Sources: NIST SP 800-63B-4 §3.1.1.2
 * (at least 15 characters for a password that is the only factor, 8 when it is one factor of
 * several; 64 or more allowed; every character allowed; no composition rules; a SHALL to refuse
 * values from blocklists of common, expected or compromised passwords, and to say why); OWASP
 * Authentication Cheat Sheet (length over complexity, block common passwords, tell the user why).
 */
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, PASSWORD_MIN_LENGTH_WITH_OTHER_FACTOR } from "@/lib/password/lengths";

export { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, PASSWORD_MIN_LENGTH_WITH_OTHER_FACTOR };

/**
 * The shortest new password an account may choose (NIST SP 800-63B-4 §3.1.1.2): 15 characters
 * while the password is its only factor, 8 once it has another (a passkey today). Registration has
 * no other factor yet. Existing passwords are never re-judged: the rule applies when one is chosen.
 */
export function minimumPasswordLength({ hasOtherFactor }: { hasOtherFactor: boolean }): number {
  return hasOtherFactor ? PASSWORD_MIN_LENGTH_WITH_OTHER_FACTOR : PASSWORD_MIN_LENGTH;
}

/**
 * zxcvbn-ts's estimate of a password: how many guesses an attacker who tries the likeliest
 * patterns first needs (log10), and the kinds of pattern it found ("spatial", "sequence", "date",
 * "dictionary", "repeat", "regex", "bruteforce").
 */
export type GuessEstimate = { guessesLog10: number; patterns: readonly string[] };

/**
 * The fewest estimated guesses (log10) a new password may need: 10^10 while it is the only factor
 * (below that are the patterns every cracking list tries first), 10^8 once it is one of two (an
 * 8-character password cannot score more, and a guessed password alone no longer signs in).
 */
export function minimumGuessesLog10({ hasOtherFactor }: { hasOtherFactor: boolean }): number {
  return hasOtherFactor ? 8 : 10;
}

// Shorter local parts ("al", "bob") are too common inside ordinary words to refuse on.
export const EMAIL_NAME_MIN_LENGTH = 4;

export type PasswordRule = "too_short" | "too_long" | "repetitive" | "contains_email" | "common" | "guessable";
export type PasswordProblem = { rule: PasswordRule | "breached" | "unchanged"; message: string };

export type PasswordContext = {
  /** The account's email; its local part may not appear in the password. */
  email?: string | undefined;
  /** Whether a normalised (NFKC, lower-cased) password is on the blocklist. */
  isCommon: (normalised: string) => boolean;
  /** minimumPasswordLength's answer for this account (15 when left out). */
  minLength?: number | undefined;
  /** The guess estimate, when the estimator is loaded (the browser's first keystrokes go without). */
  estimate?: GuessEstimate | undefined;
  /** minimumGuessesLog10's answer for this account (10 when left out). */
  minGuessesLog10?: number | undefined;
};

/** How the rules compare: compatibility forms folded and case ignored, so "Ｐassword" is "password". */
export function comparable(value: string): string {
  return value.normalize("NFKC").toLowerCase();
}

/** One short unit (up to 4 code points) said over and over: "aaaaaaaaaaaa", "abababababab", "abcabcabcabc". */
function isRepetitive(codePoints: string[]): boolean {
  for (let unit = 1; unit <= 4 && unit < codePoints.length; unit++) {
    if (codePoints.every((char, i) => char === codePoints[i % unit])) return true;
  }
  return false;
}

/**
 * The first rule a password breaks, or null. Lengths count code points of the NFC form, the form
 * that is hashed, so an emoji or an accented letter counts as one character however it was typed.
 */
export function passwordProblem(password: string, context: PasswordContext): PasswordProblem | null {
  const codePoints = [...password.normalize("NFC")];
  const minLength = context.minLength ?? PASSWORD_MIN_LENGTH;
  if (codePoints.length < minLength) return { rule: "too_short", message: `Use at least ${minLength} characters.` };
  if (codePoints.length > PASSWORD_MAX_LENGTH) return { rule: "too_long", message: `Use at most ${PASSWORD_MAX_LENGTH} characters.` };
  if (isRepetitive([...comparable(password)])) {
    return {
      rule: "repetitive",
      message: "This is one short sequence repeated (like “aaaa…” or “abab…”), which is guessed first. Choose another.",
    };
  }
  const normalised = comparable(password);
  const name = context.email ? (comparable(context.email).split("@")[0] ?? "") : "";
  if ([...name].length >= EMAIL_NAME_MIN_LENGTH && normalised.includes(name)) {
    return { rule: "contains_email", message: "Do not use your email address or its name part in your password." };
  }
  if (context.isCommon(normalised)) {
    return { rule: "common", message: "This password is on a list of common passwords that attackers try first. Choose another." };
  }
  if (context.estimate && context.estimate.guessesLog10 < (context.minGuessesLog10 ?? minimumGuessesLog10({ hasOtherFactor: false }))) {
    return { rule: "guessable", message: guessableMessage(context.estimate.patterns) };
  }
  return null;
}

const PATTERN_NAMES: Record<string, string> = {
  spatial: "a walk along the keyboard",
  sequence: "a sequence like “abcd” or “6789”",
  date: "a date",
  regex: "a recent year",
  repeat: "a repeated part",
  dictionary: "common words or names with a few digits or symbols",
};

/** Says which of the patterns attackers try first the password is made of. */
function guessableMessage(patterns: readonly string[]): string {
  const named = [...new Set(patterns.flatMap((pattern) => PATTERN_NAMES[pattern] ?? []))];
  const what = named.length > 0 ? ` (${named.join(", ")})` : "";
  return `This password follows patterns that attackers try early${what}. Add a few unrelated words.`;
}

/**
 * The password rules, in one module that both the server and the browser load (no Node APIs, no
 * dictionary of its own: the blocklist is passed in, so the page can load it lazily). The server's
 * answer is the one that counts. Sources: NIST SP 800-63B §5.1.1.2 (at least 8 characters, 64 or
 * more allowed, every character allowed, no composition rules, and a SHALL to refuse passwords
 * from lists of common or compromised values, repetitive or sequential characters and
 * context-specific words such as the user's name); OWASP Authentication Cheat Sheet (length over
 * complexity, block common passwords, tell the user why).
 */
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "@/lib/auth/limits";

export { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH };

// Shorter local parts ("al", "bob") are too common inside ordinary words to refuse on.
export const EMAIL_NAME_MIN_LENGTH = 4;

export type PasswordProblem = { rule: "too_short" | "too_long" | "repetitive" | "contains_email" | "common"; message: string };

export type PasswordContext = {
  /** The account's email; its local part may not appear in the password. */
  email?: string | undefined;
  /** Whether a normalised (NFKC, lower-cased) password is on the blocklist. */
  isCommon: (normalised: string) => boolean;
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
  if (codePoints.length < PASSWORD_MIN_LENGTH) return { rule: "too_short", message: `Use at least ${PASSWORD_MIN_LENGTH} characters.` };
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
  return null;
}

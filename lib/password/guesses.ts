import type { GuessEstimate } from "./password-rules";

/** The part of zxcvbn-ts's checker the estimate reads (the browser loads the checker lazily, the server at first use). */
export type GuessChecker = {
  check(password: string, userInputs?: (string | number)[]): { guessesLog10: number; score: number; sequence: { pattern: string }[] };
};

/**
 * zxcvbn-ts's estimate of a password, with the account's email and its name part as words an
 * attacker would try first. Only the first 128 characters are scored (the rules refuse longer
 * ones), so a pasted novel cannot make the matcher's work grow.
 */
export function estimateGuesses(checker: GuessChecker, password: string, email?: string): GuessEstimate & { score: number } {
  const userInputs = email ? [email, email.split("@")[0] ?? ""] : [];
  const result = checker.check([...password].slice(0, 128).join(""), userInputs);
  return { guessesLog10: result.guessesLog10, score: result.score, patterns: result.sequence.map((match) => match.pattern) };
}

import { ZxcvbnFactory } from "@zxcvbn-ts/core";
import { adjacencyGraphs, dictionary } from "@zxcvbn-ts/language-common";
import { estimateGuesses, type GuessChecker } from "./guesses";
import type { GuessEstimate } from "./password-rules";

let checker: GuessChecker | undefined;

/** The server's guess estimate: the same checker and dictionaries as the browser's meter, built once on first use. */
export function serverGuessEstimate(password: string, email?: string): GuessEstimate {
  checker ??= new ZxcvbnFactory({ dictionary: { ...dictionary }, graphs: adjacencyGraphs });
  return estimateGuesses(checker, password, email);
}

let blocklist: Set<string> | undefined;

/**
 * Whether a normalised password is in zxcvbn-ts's common-password list (about 49,000 entries
 * from leaked password sets, bundled: no network call). Only entries long enough to pass the
 * length rule could ever match; the set is built once, on first use.
 */
export function isCommonPassword(normalised: string): boolean {
  blocklist ??= new Set(dictionary["passwords-common"].map((entry) => entry.normalize("NFKC").toLowerCase()));
  return blocklist.has(normalised);
}

import { ZxcvbnFactory } from "@zxcvbn-ts/core";
import { adjacencyGraphs, dictionary } from "@zxcvbn-ts/language-common";
import { estimateGuesses, type GuessChecker } from "./guesses";
import type { GuessEstimate } from "./rules";

let checker: GuessChecker | undefined;

/** The server's guess estimate: the same checker and dictionaries as the browser's meter, built once on first use. */
export function serverGuessEstimate(password: string, email?: string): GuessEstimate {
  checker ??= new ZxcvbnFactory({ dictionary: { ...dictionary }, graphs: adjacencyGraphs });
  return estimateGuesses(checker, password, email);
}

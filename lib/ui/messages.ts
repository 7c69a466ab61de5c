/**
 * Sentences the server and the pages both show, written once. Pure strings (no zod, no server
 * code), so client components import them at no cost.
 */

/** Wrong password and unknown account alike: nothing tells one from the other. */
export const INCORRECT_CREDENTIALS = "Incorrect email or password.";

import { dictionary } from "@zxcvbn-ts/language-common";

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

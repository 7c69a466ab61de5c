import Bowser from "bowser";

/** The words a label may hold besides bowser's names; the account page says them in its language (app/account/labels.ts). */
export const UNKNOWN_BROWSER = "Unknown browser";
export const API_CLIENT_LABEL = "API client";
export const PASSKEY_SUFFIX = " (passkey)";

const KNOWN_BROWSERS = new Set<string>(Object.values(Bowser.BROWSER_MAP));
const KNOWN_SYSTEMS = new Set<string>(Object.values(Bowser.OS_MAP));

/**
 * "Firefox on Linux": the browser family a user recognises on the account page. Only names from
 * bowser's own tables are shown, so a crafted User-Agent cannot put its text on the page; the
 * header is cut to 512 characters before parsing (bowser's regexes on an unbounded string).
 */
export function browserLabel(userAgent: string | null | undefined): string {
  const ua = (userAgent ?? "").slice(0, 512);
  if (!ua.trim()) return UNKNOWN_BROWSER;
  const parser = Bowser.getParser(ua);
  const browser = KNOWN_BROWSERS.has(parser.getBrowserName()) ? parser.getBrowserName() : UNKNOWN_BROWSER;
  const system = parser.getOSName();
  return KNOWN_SYSTEMS.has(system) ? `${browser} on ${system}` : browser;
}

/** An API session's label: its browser when one called, else "API client" (a script, an app). */
export function apiClientLabel(userAgent: string | null | undefined): string {
  const label = browserLabel(userAgent);
  return label.startsWith(UNKNOWN_BROWSER) ? API_CLIENT_LABEL : label;
}

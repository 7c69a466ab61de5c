import Negotiator from "negotiator";

/**
 * Which language a request is answered in: the visitor's own choice (the language cookie), else
 * the best match in Accept-Language, else the instance's default. Pure: the available locales and
 * the default are parameters, the headers are strings. Anything malformed is ignored, never an
 * error: a strange header is a visitor's browser, not an attack worth a 500.
 */
/** The language cookie's plain name; an instance's own name is the cookie room's (lib/http/cookies.ts). */
export const LOCALE_COOKIE = "gatehouse-locale";

/** The pseudo-locale (I18N_PSEUDO_LOCALE=1): every catalogue string wrapped in markers, for the leak test. */
export const PSEUDO_LOCALE = "xx";

// A language tag as catalogues are named: "en", "de", "pt-BR". Longer or odder values are no choice of ours.
const TAG = /^[a-z]{2,3}(-[A-Z]{2})?$/;

export function isLocaleTag(value: string): boolean {
  return TAG.test(value);
}

/** The cookie's value when it names an available locale; anything else counts as no choice. */
export function chosenLocale(cookie: string | undefined, available: readonly string[]): string | undefined {
  return cookie !== undefined && isLocaleTag(cookie) && available.includes(cookie) ? cookie : undefined;
}

/** Accept-Language's best available match: exact tag first, then its language ("de-AT" → "de"). */
export function acceptedLocale(header: string | null | undefined, available: readonly string[]): string | undefined {
  // Browsers send a few dozen bytes; a huge header is not worth parsing.
  if (!header || header.length > 512) return undefined;
  const wanted = new Negotiator({ headers: { "accept-language": header } }).languages();
  for (const tag of wanted) {
    const exact = available.find((locale) => locale.toLowerCase() === tag.toLowerCase());
    if (exact) return exact;
    const language = tag.split("-")[0]!.toLowerCase();
    const base = available.find((locale) => locale === language);
    if (base) return base;
  }
  return undefined;
}

export type LocaleInput = { cookie?: string; acceptLanguage?: string | null };

export function negotiateLocale(input: LocaleInput, available: readonly string[], defaultLocale: string): string {
  return chosenLocale(input.cookie, available) ?? acceptedLocale(input.acceptLanguage, available) ?? defaultLocale;
}

/** The language cookie as a request's Cookie header carries it (the first one; a malformed header gives none). */
export function localeCookie(cookieHeader: string | null, cookieName = LOCALE_COOKIE): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(";")) {
    const [name, ...rest] = part.trim().split("=");
    if (name === cookieName) return rest.join("=");
  }
  return undefined;
}

/** The locale of a request from its headers alone (route handlers outside a page). */
export function requestLocale(
  headers: { get(name: string): string | null },
  available: readonly string[],
  defaultLocale: string,
  cookieName = LOCALE_COOKIE,
): string {
  return negotiateLocale(
    { cookie: localeCookie(headers.get("cookie"), cookieName), acceptLanguage: headers.get("accept-language") },
    available,
    defaultLocale,
  );
}

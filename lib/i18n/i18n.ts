import type { CompiledMessage } from "icu-minify/format";
import { compileCatalogue, pseudoCatalogue, readCatalogues, REFERENCE_LOCALE, type Catalogue, type CompiledCatalogue } from "./catalogues";
import { formatMessage, type Values } from "./format";
import { LOCALE_COOKIE, PSEUDO_LOCALE, requestLocale } from "./locales";

/** Translates one key of one locale; missing keys fall back to English, then to the key itself (never a throw). */
export type Translate = (key: string, values?: Values) => string;

/** The languages of this instance, their catalogues, and translation for the server. */
export type I18n = {
  /** Every locale the visitor may choose, the default first. */
  locales: readonly string[];
  defaultLocale: string;
  /** The raw (ICU source) messages of a locale, for next-intl's server components. */
  messages(locale: string): Catalogue;
  /** `t("refusals.busy")`, or scoped to a namespace: `translator(locale, "refusals")("busy")`. */
  translator(locale: string, namespace?: string): Translate;
  /** The compiled messages of the given namespaces, for a page's client components (nothing else ships). */
  clientMessages(locale: string, namespaces: readonly string[]): ClientMessages;
  /** A request's locale: its language cookie, else Accept-Language, else the default (a Headers, or server.mjs's reader). */
  localeOf(headers: { get(name: string): string | null }): string;
  /** The language cookie's name on this instance. */
  cookieName: string;
};

/** Flat "namespace.key" → compiled message: what a page hands its client components. */
export type ClientMessages = Record<string, CompiledMessage>;

/** `cookieName`: the language cookie's name on this instance (the cookie room's, lib/http/cookies.ts). */
export type I18nSettings = { defaultLocale: string; pseudoLocale: boolean; cookieName?: string };

export function createI18n(settings: I18nSettings, catalogues: Map<string, Catalogue> = readCatalogues()): I18n {
  const english = catalogues.get(REFERENCE_LOCALE)!;
  const sources = new Map(catalogues);
  if (settings.pseudoLocale) sources.set(PSEUDO_LOCALE, pseudoCatalogue(english));
  if (!sources.has(settings.defaultLocale)) {
    throw new Error(`DEFAULT_LOCALE: no catalogue folder messages/${settings.defaultLocale} (have ${[...sources.keys()].join(", ")})`);
  }
  const compiled = new Map<string, CompiledCatalogue>();
  for (const [locale, catalogue] of sources) compiled.set(locale, compileCatalogue(catalogue));
  const reference = compiled.get(REFERENCE_LOCALE)!;
  const cookieName = settings.cookieName ?? LOCALE_COOKIE;
  const locales = [settings.defaultLocale, ...[...sources.keys()].filter((l) => l !== settings.defaultLocale)];
  const known = (locale: string) => (compiled.has(locale) ? locale : settings.defaultLocale);

  return {
    locales,
    defaultLocale: settings.defaultLocale,
    messages: (locale) => sources.get(known(locale))!,
    translator(locale, namespace) {
      const tag = known(locale);
      const messages = compiled.get(tag)!;
      return (key, values) => {
        const id = namespace ? `${namespace}.${key}` : key;
        const message = messages.get(id) ?? reference.get(id);
        if (message === undefined) return id;
        try {
          // The pseudo-locale formats numbers and plurals as English does.
          return formatMessage(message, tag === PSEUDO_LOCALE ? REFERENCE_LOCALE : tag, values);
        } catch {
          // A value the caller did not pass: the key says which message, and no page or mail fails.
          return id;
        }
      };
    },
    clientMessages(locale, namespaces) {
      const messages = compiled.get(known(locale))!;
      const picked: ClientMessages = {};
      for (const id of reference.keys()) {
        if (!namespaces.some((namespace) => id.startsWith(`${namespace}.`))) continue;
        picked[id] = messages.get(id) ?? reference.get(id)!;
      }
      return picked;
    },
    cookieName,
    localeOf: (headers) => requestLocale(headers, locales, settings.defaultLocale, cookieName),
  };
}

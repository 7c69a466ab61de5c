import format, { type CompiledMessage, type FormatValues } from "icu-minify/format";

/**
 * Formats a compiled message: the one place (server and pages alike) that turns catalogue
 * entries into text. Intl does the numbers, plurals and dates; `timeZone` applies to dates.
 * Pure apart from Intl's own caches, small enough (icu-minify's runtime) for every page.
 */
export type Values = Record<string, string | number | Date>;

const dateTimeFormats = new Map<string, Intl.DateTimeFormat>();
const numberFormats = new Map<string, Intl.NumberFormat>();
const pluralRules = new Map<string, Intl.PluralRules>();

function cached<T>(cache: Map<string, T>, args: unknown[], make: () => T): T {
  const key = JSON.stringify(args);
  let value = cache.get(key);
  if (value === undefined) cache.set(key, (value = make()));
  return value;
}

const FORMATTERS = {
  getDateTimeFormat: (...args: ConstructorParameters<typeof Intl.DateTimeFormat>) =>
    cached(dateTimeFormats, args, () => new Intl.DateTimeFormat(...args)),
  getNumberFormat: (...args: ConstructorParameters<typeof Intl.NumberFormat>) =>
    cached(numberFormats, args, () => new Intl.NumberFormat(...args)),
  getPluralRules: (...args: ConstructorParameters<typeof Intl.PluralRules>) =>
    cached(pluralRules, args, () => new Intl.PluralRules(...args)),
};

const DATE_FORMATS = {
  dateTime: {
    // "1 December 2026, 20:47": a moment in a mail or the event list.
    moment: { dateStyle: "long", timeStyle: "short" } satisfies Intl.DateTimeFormatOptions,
    clock: { timeStyle: "short" } satisfies Intl.DateTimeFormatOptions,
    // The account page's moments: in the viewer's zone once the page runs in their browser; before
    // that (and without JavaScript) in UTC, which the text then names.
    day: { dateStyle: "medium" } satisfies Intl.DateTimeFormatOptions,
    dayUtc: { dateStyle: "medium", timeZone: "UTC" } satisfies Intl.DateTimeFormatOptions,
    local: { dateStyle: "medium", timeStyle: "short" } satisfies Intl.DateTimeFormatOptions,
    utc: {
      year: "numeric",
      month: "short",
      day: "numeric",
      hour: "numeric",
      minute: "2-digit",
      timeZone: "UTC",
      timeZoneName: "short",
    } satisfies Intl.DateTimeFormatOptions,
  },
};

export function formatMessage(message: CompiledMessage, locale: string, values?: Values, timeZone?: string): string {
  const result = format(message, locale, values as FormatValues | undefined, { formatters: FORMATTERS, formats: DATE_FORMATS, timeZone });
  return Array.isArray(result) ? result.join("") : String(result);
}

/** A message with tags (`<time>{time}</time>`): the parts, tags rendered by `tags` (React elements on a page). */
export function formatRich<Element>(
  message: CompiledMessage,
  locale: string,
  values: Values,
  tags: Record<string, (chunks: Array<string | Element>) => Element>,
): Array<string | Element> {
  const result = format<Element>(message, locale, { ...values, ...tags } as FormatValues<Element>, {
    formatters: FORMATTERS,
    formats: DATE_FORMATS,
  });
  return Array.isArray(result) ? result : [result];
}

/**
 * An IANA time zone as a browser reports it (`Intl.DateTimeFormat().resolvedOptions().timeZone`),
 * when Intl knows it; anything else (too long, unknown, not a string) is no zone, never an error:
 * it only decides how mails write a time, and UTC is always written too.
 */
export function validTimeZone(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length === 0 || value.length > 64 || !/^[A-Za-z0-9_+\-/]+$/.test(value)) return undefined;
  try {
    return new Intl.DateTimeFormat("en", { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

import { flatten, readCatalogues, REFERENCE_LOCALE } from "./catalogues";
import { createI18n, type Translate } from "./i18n";
import type { Values } from "./format";

/**
 * A sentence of a response body, named by its catalogue key rather than written out: the body is
 * rendered in English when it is built (what every client that sends no language gets), and
 * again in the request's language by the route's wrapper (`localized`, lib/http/responses.ts).
 * The `error` code beside it never changes: clients branch on the code, people read the sentence.
 */
export class Sentence {
  constructor(
    readonly key: string,
    readonly values?: Values,
  ) {}
}

export function sentence(key: string, values?: Values): Sentence {
  return new Sentence(key, values);
}

/** The body with every Sentence in it (at any depth of plain objects and arrays) rendered by `t`. */
export function rendered(value: unknown, t: Translate): unknown {
  if (value instanceof Sentence) return t(value.key, value.values);
  if (Array.isArray(value)) return value.map((item) => rendered(item, t));
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, rendered(item, t)]));
  }
  return value;
}

export function containsSentence(value: unknown): boolean {
  if (value instanceof Sentence) return true;
  if (Array.isArray(value)) return value.some(containsSentence);
  if (value !== null && typeof value === "object") return Object.values(value).some(containsSentence);
  return false;
}

type English = {
  t: Translate;
  exact: Map<string, string>;
  templates: { key: string; pattern: RegExp; names: string[]; literal: number }[];
};
let english: English | undefined;

// A message whose only placeholders are plain arguments ("Use at least {minLength, number} characters.").
const SIMPLE_ARGUMENT = /\{(\w+)(?:, number)?\}/g;

function englishIndex(): English {
  if (english) return english;
  const catalogue = readCatalogues().get(REFERENCE_LOCALE)!;
  const exact = new Map<string, string>();
  const templates: English["templates"] = [];
  for (const [key, message] of flatten(catalogue)) {
    // Messages with tags (<link>…</link>) are for pages only: no server sentence has them.
    if (message.includes("<")) continue;
    if (!/[{}']/.test(message)) {
      if (!exact.has(message)) exact.set(message, key);
      continue;
    }
    const withoutArguments = message.replace(SIMPLE_ARGUMENT, "");
    // Arguments and punctuation alone ("{browser}, {address}") would match any sentence.
    if (/[{}]/.test(withoutArguments) || !/\p{L}/u.test(withoutArguments)) continue;
    const names = [...message.matchAll(SIMPLE_ARGUMENT)].map((match) => match[1]!);
    const source = message
      .split(SIMPLE_ARGUMENT)
      .map((part, i) => (i % 2 === 1 ? "(.+?)" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
      .join("");
    templates.push({ key, pattern: new RegExp(`^${source}$`), names, literal: withoutArguments.length });
  }
  // The most specific first: "{browser} on {system}" must not take a longer sentence that has " on " in it.
  templates.sort((a, b) => b.literal - a.literal);
  english = { t: createI18n({ defaultLocale: "en", pseudoLocale: false }, readCatalogues()).translator("en"), exact, templates };
  return english;
}

/** English from the catalogues, read once per process: the language of a body before the wrapper localizes it. */
export function englishTranslator(): Translate {
  return englishIndex().t;
}

/**
 * The catalogue entry an English sentence came from, like gettext's msgid: so a sentence written
 * as a constant (lib/ui/messages.ts, a module's table of reasons) is translated without its module
 * naming keys. Numbers in simple arguments come back as numbers, for plurals and Intl.
 */
export function sentenceFor(text: string): Sentence | undefined {
  const index = englishIndex();
  const key = index.exact.get(text);
  if (key) return new Sentence(key);
  for (const template of index.templates) {
    const match = template.pattern.exec(text);
    if (!match) continue;
    const values: Values = {};
    template.names.forEach((name, i) => {
      const raw = match[i + 1]!;
      values[name] = /^\d+$/.test(raw) ? Number(raw) : raw;
    });
    return new Sentence(template.key, values);
  }
  return undefined;
}

/** Every string in a body that a catalogue has, as its Sentence: what `localized` can translate. */
export function withSentences(value: unknown): unknown {
  if (typeof value === "string") return sentenceFor(value) ?? value;
  if (Array.isArray(value)) return value.map(withSentences);
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, key === "error" ? item : withSentences(item)]));
  }
  return value;
}

import fs from "node:fs";
import path from "node:path";
import compile from "icu-minify/compile";
import type { CompiledMessage } from "icu-minify/format";
import { PSEUDO_LOCALE, isLocaleTag } from "./locales";

/**
 * The catalogues: `messages/<locale>/<namespace>.json`, one folder per language, read once at
 * start. Adding a language is adding a folder; English is the reference every other folder must
 * match key for key (messages/catalogues.test.ts). Messages are ICU MessageFormat, compiled here
 * once (icu-minify), so neither the server nor any page parses ICU per request and no page ships
 * a parser.
 */
export const MESSAGES_DIR = "messages";
export const REFERENCE_LOCALE = "en";

/** A namespace's messages: nested objects whose leaves are ICU strings. */
export type MessageTree = { [key: string]: string | MessageTree };
/** One language: namespace → messages. */
export type Catalogue = Record<string, MessageTree>;

// The build's tracer cannot tell which files a path read at run time names, so it took the whole
// repository into the standalone server (tests, bench, docs, sources). The catalogues are named to
// it instead (next.config.ts, outputFileTracingIncludes), and these reads are left out of tracing.
export function readCatalogues(dir = MESSAGES_DIR): Map<string, Catalogue> {
  const catalogues = new Map<string, Catalogue>();
  for (const locale of fs.readdirSync(/*turbopackIgnore: true*/ dir).sort()) {
    const folder = path.join(/*turbopackIgnore: true*/ dir, locale);
    if (!isLocaleTag(locale) || !fs.statSync(/*turbopackIgnore: true*/ folder).isDirectory()) continue;
    const catalogue: Catalogue = {};
    for (const file of fs.readdirSync(/*turbopackIgnore: true*/ folder).sort()) {
      if (!file.endsWith(".json")) continue;
      const text = fs.readFileSync(/*turbopackIgnore: true*/ path.join(/*turbopackIgnore: true*/ folder, file), "utf8");
      catalogue[file.slice(0, -".json".length)] = JSON.parse(text) as MessageTree;
    }
    catalogues.set(locale, catalogue);
  }
  if (!catalogues.has(REFERENCE_LOCALE)) throw new Error(`${dir}/${REFERENCE_LOCALE}: the English catalogues are missing`);
  return catalogues;
}

/** "namespace.key.sub" → ICU string, for every leaf. */
export function flatten(catalogue: Catalogue): Map<string, string> {
  const flat = new Map<string, string>();
  const walk = (prefix: string, tree: MessageTree) => {
    for (const [key, value] of Object.entries(tree)) {
      const id = `${prefix}.${key}`;
      if (typeof value === "string") flat.set(id, value);
      else walk(id, value);
    }
  };
  for (const [namespace, tree] of Object.entries(catalogue)) walk(namespace, tree);
  return flat;
}

function mapLeaves(tree: MessageTree, leaf: (message: string) => string): MessageTree {
  return Object.fromEntries(
    Object.entries(tree).map(([key, value]) => [key, typeof value === "string" ? leaf(value) : mapLeaves(value, leaf)]),
  );
}

// Markers no sentence of ours contains: a visible string without them did not come from a catalogue.
export const PSEUDO_OPEN = "⟦";
export const PSEUDO_CLOSE = "⟧";

/** English with every message wrapped in markers (still valid ICU: the markers are literal text). */
export function pseudoCatalogue(english: Catalogue): Catalogue {
  return Object.fromEntries(
    Object.entries(english).map(([namespace, tree]) => [namespace, mapLeaves(tree, (m) => `${PSEUDO_OPEN}${m}${PSEUDO_CLOSE}`)]),
  );
}

export type CompiledCatalogue = Map<string, CompiledMessage>;

export function compileCatalogue(catalogue: Catalogue): CompiledCatalogue {
  const compiled: CompiledCatalogue = new Map();
  for (const [id, message] of flatten(catalogue)) {
    try {
      // Plain objects and arrays only (icu-minify's plural tables have no prototype): a page hands
      // these to its client components, and React passes nothing else from server to client.
      compiled.set(id, JSON.parse(JSON.stringify(compile(message))) as CompiledMessage);
    } catch (error) {
      throw new Error(`${id}: not valid ICU MessageFormat (${(error as Error).message})`);
    }
  }
  return compiled;
}

export { PSEUDO_LOCALE };

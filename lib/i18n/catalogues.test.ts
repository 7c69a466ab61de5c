import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parse, TYPE } from "@formatjs/icu-messageformat-parser";
import { describe, expect, it } from "vitest";
import { compileCatalogue, flatten, MESSAGES_DIR, readCatalogues, REFERENCE_LOCALE } from "./catalogues";
import { createI18n } from "./i18n";

const catalogues = readCatalogues();
const english = flatten(catalogues.get(REFERENCE_LOCALE)!);

type Element = { type: number; value?: string; options?: Record<string, { value: Element[] }>; children?: Element[] };

/** The argument names of an ICU message (from its syntax tree): a translation must use the same ones, or a value goes missing. */
function argumentNames(message: string): string[] {
  const names = new Set<string>();
  const walk = (elements: Element[]) => {
    for (const element of elements) {
      if ([TYPE.argument, TYPE.number, TYPE.date, TYPE.time, TYPE.select, TYPE.plural].includes(element.type)) names.add(element.value!);
      for (const option of Object.values(element.options ?? {})) walk(option.value);
      if (element.children) walk(element.children);
    }
  };
  walk(parse(message) as Element[]);
  return [...names].sort();
}

describe("the catalogues", () => {
  it("has English and German, each folder a language", () => {
    expect([...catalogues.keys()]).toEqual(expect.arrayContaining(["en", "de"]));
  });

  for (const [locale, catalogue] of catalogues) {
    it(`${locale}: has every key English has, and no other`, () => {
      const keys = [...flatten(catalogue).keys()].sort();
      expect(keys).toEqual([...english.keys()].sort());
    });

    it(`${locale}: every message is ICU MessageFormat that compiles, with English's arguments`, () => {
      expect(() => compileCatalogue(catalogue)).not.toThrow();
      for (const [key, message] of flatten(catalogue)) {
        expect(argumentNames(message), `${locale} ${key}`).toEqual(argumentNames(english.get(key)!));
        expect(message.trim(), `${locale} ${key}`).not.toBe("");
      }
    });
  }

  it("fails a start whose catalogue does not parse, naming the key", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-messages-"));
    fs.cpSync(MESSAGES_DIR, dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, "de", "common.json"),
      JSON.stringify({ ...JSON.parse(fs.readFileSync(path.join(dir, "de", "common.json"), "utf8")), signIn: "{broken" }),
    );
    expect(() => createI18n({ defaultLocale: "en", pseudoLocale: false }, readCatalogues(dir))).toThrow(/common\.signIn/);
    expect(() => createI18n({ defaultLocale: "fr", pseudoLocale: false }, readCatalogues(dir))).toThrow(/DEFAULT_LOCALE/);
  });
});

describe("createI18n", () => {
  const i18n = createI18n({ defaultLocale: "en", pseudoLocale: true }, catalogues);

  it("translates with plurals and numbers through Intl", () => {
    expect(i18n.translator("de", "duration")("aboutMinutes", { minutes: 5 })).toBe("etwa 5 Minuten");
    expect(i18n.translator("en", "duration")("aboutMinutes", { minutes: 1 })).toBe("about a minute");
    expect(i18n.translator("de", "fields")("tooShort", { minLength: 1500 })).toBe("Verwenden Sie mindestens 1.500 Zeichen.");
  });

  it("wraps every message in markers in the pseudo-locale, and falls back to the default for unknown ones", () => {
    expect(i18n.locales).toEqual(["en", "de", "xx"]);
    expect(i18n.translator("xx", "common")("signIn")).toBe("⟦Sign in⟧");
    expect(i18n.translator("fr", "common")("signIn")).toBe("Sign in");
    expect(i18n.translator("de", "common")("no.such.key")).toBe("common.no.such.key");
  });

  it("gives a page only the namespaces it asks for", () => {
    const picked = i18n.clientMessages("de", ["banner"]);
    expect(Object.keys(picked).length).toBeGreaterThan(0);
    expect(Object.keys(picked).every((id) => id.startsWith("banner."))).toBe(true);
  });
});

describe("compiled messages", () => {
  it("are plain JSON values, which React can hand from a server to a client component", () => {
    for (const message of compileCatalogue(catalogues.get("de")!).values()) {
      const plain = (value: unknown): boolean =>
        value === null ||
        typeof value !== "object" ||
        (Array.isArray(value)
          ? value.every(plain)
          : Object.getPrototypeOf(value) === Object.prototype && Object.values(value).every(plain));
      expect(plain(message)).toBe(true);
    }
  });
});

describe("a translator", () => {
  it("never throws: a missing value gives the key", () => {
    const t = createI18n({ defaultLocale: "en", pseudoLocale: false }, catalogues).translator("de");
    expect(t("signIn.noAccount")).toBe("signIn.noAccount");
    expect(t("fields.tooShort")).toBe("fields.tooShort");
  });
});

describe("tags", () => {
  it("never share a name with an argument of the same message (the tag would replace the value)", () => {
    for (const [key, message] of english) {
      const tags = [...message.matchAll(/<(\w+)>/g)].map((match) => match[1]!);
      for (const tag of tags) expect(argumentNames(message), `${key}: <${tag}>`).not.toContain(tag);
    }
  });
});

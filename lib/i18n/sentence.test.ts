import { describe, expect, it } from "vitest";
import { readCatalogues } from "./catalogues";
import { createI18n } from "./i18n";
import { rendered, sentence, sentenceFor, withSentences } from "./sentence";

const de = createI18n({ defaultLocale: "en", pseudoLocale: false }, readCatalogues()).translator("de");

describe("sentences of a response body", () => {
  it("finds the catalogue entry of an English sentence, with its numbers", () => {
    expect(sentenceFor("Enter your email and password.")).toEqual(sentence("messages.enterEmailAndPassword"));
    expect(sentenceFor("Use at least 15 characters.")).toEqual(sentence("fields.tooShort", { minLength: 15 }));
    expect(sentenceFor("Nobody wrote this down.")).toBeUndefined();
  });

  it("renders a body in another language, leaving codes and figures alone", () => {
    const body = withSentences({
      error: "invalid_input",
      message: "Check the highlighted fields.",
      fields: { email: "Email is required." },
      n: 3,
    });
    expect(rendered(body, de)).toEqual({
      error: "invalid_input",
      message: "Prüfen Sie die markierten Felder.",
      fields: { email: "Die E-Mail-Adresse fehlt." },
      n: 3,
    });
    expect(rendered(withSentences({ error: "Email is required." }), de)).toEqual({ error: "Email is required." });
  });
});

describe("English, unchanged", () => {
  it("renders every plain English catalogue sentence back to itself, so English clients see no difference", async () => {
    const { flatten, REFERENCE_LOCALE } = await import("./catalogues");
    const english = createI18n({ defaultLocale: "en", pseudoLocale: false }, readCatalogues()).translator("en");
    for (const text of flatten(readCatalogues().get(REFERENCE_LOCALE)!).values()) {
      if (/[{}<]/.test(text)) continue;
      const found = sentenceFor(text);
      expect(found, text).toBeDefined();
      expect(english(found!.key, found!.values)).toBe(text);
    }
    expect(rendered(sentenceFor("The request body is larger than 1048576 bytes."), english)).toBe(
      "The request body is larger than 1048576 bytes.",
    );
    expect(rendered(sentenceFor("The request body is larger than 1048576 bytes."), de)).toBe(
      "Der Inhalt der Anfrage ist größer als 1048576 Bytes.",
    );
  });
});

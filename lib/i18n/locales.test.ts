import { describe, expect, it } from "vitest";
import { acceptedLocale, chosenLocale, localeCookie, negotiateLocale, requestLocale } from "./locales";

const AVAILABLE = ["en", "de"];

describe("negotiateLocale", () => {
  it("takes the visitor's choice first, then Accept-Language, then the default", () => {
    expect(negotiateLocale({ cookie: "de", acceptLanguage: "en-US" }, AVAILABLE, "en")).toBe("de");
    expect(negotiateLocale({ acceptLanguage: "de-AT,de;q=0.9,en;q=0.5" }, AVAILABLE, "en")).toBe("de");
    expect(negotiateLocale({ acceptLanguage: "fr-FR,fr;q=0.9" }, AVAILABLE, "en")).toBe("en");
    expect(negotiateLocale({}, AVAILABLE, "de")).toBe("de");
  });

  it("follows the q-values, not the order", () => {
    expect(acceptedLocale("en;q=0.2, de;q=0.8", AVAILABLE)).toBe("de");
    expect(acceptedLocale("de;q=0, en", AVAILABLE)).toBe("en");
  });

  it("ignores a malformed or unknown cookie or header, never throwing", () => {
    for (const cookie of ["", "fr", "DE", "de-de", "../../etc", "de;", "x".repeat(5000), "\u0000"]) {
      expect(chosenLocale(cookie, AVAILABLE), JSON.stringify(cookie)).toBeUndefined();
    }
    for (const header of ["", ";;;", "*", "q=1", "de;q=abc", "<script>", "de-".repeat(400), "\u00ff\u00fe"]) {
      expect(() => negotiateLocale({ acceptLanguage: header }, AVAILABLE, "en")).not.toThrow();
      expect(["en", "de"]).toContain(negotiateLocale({ acceptLanguage: header }, AVAILABLE, "en"));
    }
    expect(negotiateLocale({ acceptLanguage: "de-".repeat(400) }, AVAILABLE, "en")).toBe("en");
  });

  it("reads the language cookie from a Cookie header among others", () => {
    expect(localeCookie("a=1; gatehouse-locale=de; b=2")).toBe("de");
    expect(localeCookie("gatehouse-localex=de")).toBeUndefined();
    expect(localeCookie(null)).toBeUndefined();
    const headers = new Headers({ cookie: "gatehouse-locale=xx", "accept-language": "de" });
    expect(requestLocale(headers, AVAILABLE, "en")).toBe("de");
  });
});

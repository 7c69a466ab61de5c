import { describe, expect, it } from "vitest";
import { createI18n } from "@/lib/i18n/i18n";
import { apiClientLabel, browserLabel } from "@/lib/sessions/browser-label";
import { browserText, EVENT_KINDS, eventText } from "./account-labels";

const i18n = createI18n({ defaultLocale: "en", pseudoLocale: false });
const english = i18n.translator("en", "account");
const german = i18n.translator("de", "account");

const FIREFOX_LINUX = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";

describe("the account page's labels", () => {
  it("says every security event kind from the catalogue, in English as before and in German", () => {
    for (const kind of EVENT_KINDS) {
      expect(eventText(kind, english), kind).not.toContain("events.kind");
      expect(eventText(kind, german), kind).not.toBe(eventText(kind, english));
    }
    expect(eventText("sign_in_succeeded", english)).toBe("Signed in");
    expect(eventText("sign_in_succeeded", german)).toBe("Angemeldet");
    // A kind this version does not know (a newer one's row) shows as its code, never a key.
    expect(eventText("from_the_future", german)).toBe("from_the_future");
  });

  it("says a stored browser label in the page's language, keeping bowser's names", () => {
    const cases: [string, string, string][] = [
      [browserLabel(FIREFOX_LINUX), "Firefox on Linux", "Firefox unter Linux"],
      [browserLabel(""), "Unknown browser", "Unbekannter Browser"],
      [browserLabel("Mozilla/5.0 (X11; Linux x86_64) NoSuchBrowser/1"), "Unknown browser on Linux", "Unbekannter Browser unter Linux"],
      [apiClientLabel("curl/8.5.0"), "API client", "API-Client"],
      [`${browserLabel(FIREFOX_LINUX)} (passkey)`, "Firefox on Linux (passkey)", "Firefox unter Linux (Passkey)"],
    ];
    for (const [stored, inEnglish, inGerman] of cases) {
      expect(browserText(stored, english)).toBe(inEnglish);
      expect(browserText(stored, german)).toBe(inGerman);
    }
  });
});

import { describe, expect, it } from "vitest";
import { createI18n } from "@/lib/i18n/i18n";
import { brandedMessages, type NoticeKind } from "./messages";

const i18n = createI18n({ DEFAULT_LOCALE: "en", I18N_PSEUDO_LOCALE: "true" });
const brand = {
  name: "Acme",
  logoUrl: "https://login.acme.example/api/brand/logo/abc",
  supportUrl: "https://acme.example/help",
  privacyUrl: null,
  termsUrl: null,
  color: "#b3261e",
};
const messages = (locale: string, timeZone: string | null = null) =>
  brandedMessages({ brand, t: i18n.translator(locale), locale, timeZone });
const ORIGIN = { browser: "Firefox on Linux", address: "198.51.100.x", atMs: Date.parse("2026-12-01T20:47:00Z") };
const RESET = "https://login.acme.example/forgot-password";

/** Every kind, built with the same arguments a real send uses. */
function everyKind(locale: string, timeZone: string | null = "Europe/Berlin") {
  const m = messages(locale, timeZone);
  const notices: Record<NoticeKind, ReturnType<typeof m.passwordChanged>> = {
    password_breached: m.passwordBreached("a@x.example", ORIGIN, RESET),
    new_device_sign_in: m.newDeviceSignIn("a@x.example", ORIGIN, RESET),
    password_changed: m.passwordChanged("a@x.example", ORIGIN, RESET),
    password_was_reset: m.passwordWasReset("a@x.example", ORIGIN, RESET),
    refresh_token_reused: m.refreshTokenReused("a@x.example", ORIGIN, RESET),
    passkey_added: m.passkeyAdded("a@x.example", ORIGIN, RESET, "YubiKey"),
    passkey_removed: m.passkeyRemoved("a@x.example", ORIGIN, RESET),
    passkey_counter_regressed: m.passkeyCounterRegressed("a@x.example", ORIGIN, RESET, "YubiKey"),
    factor_added: m.factorAdded("a@x.example", ORIGIN, RESET, "An authenticator app"),
    factor_removed: m.factorRemoved("a@x.example", ORIGIN, RESET, "A passkey"),
    recovery_code_used: m.recoveryCodeUsed("a@x.example", ORIGIN, RESET, "9"),
    recovery_codes_replaced: m.recoveryCodesReplaced("a@x.example", ORIGIN, RESET),
    factors_removed_by_operator: m.factorsRemovedByOperator("a@x.example", ORIGIN, RESET),
  };
  return [
    m.verifyEmail("a@x.example", "https://login.acme.example/verify-email#token=t", 48),
    m.addressTaken("a@x.example", "https://login.acme.example/sign-in", RESET),
    m.passwordReset("a@x.example", "https://login.acme.example/reset-password#token=t", 30),
    m.lockedOut("a@x.example", "https://login.acme.example/unlock#token=t", 60, ORIGIN),
    ...Object.values(notices),
  ];
}

describe("mails", () => {
  it("say what happened in calm subjects, with the brand's name", () => {
    const m = messages("en");
    expect(m.newDeviceSignIn("a@x.example", ORIGIN, RESET).subject).toBe("New sign-in to your Acme account");
    expect(m.passwordChanged("a@x.example", ORIGIN, RESET).subject).toBe("Your Acme password was changed");
    expect(m.lockedOut("a@x.example", "https://u", 60, ORIGIN).subject).toBe("Sign-in to your Acme account is paused");
  });

  it("come as HTML and text, each with the brand, one button and its link spelled out", () => {
    for (const mail of everyKind("en")) {
      expect(mail.html.match(/display:inline-block/g), mail.kind).toHaveLength(1);
      const button = mail.links[0]!;
      expect(mail.text, mail.kind).toContain(button.url);
      expect(mail.html, mail.kind).toContain(`>${button.url}</a>`);
      expect(mail.html, mail.kind).toContain('<img src="https://login.acme.example/api/brand/logo/abc" alt=""');
      expect(mail.html).toMatch(/^<!doctype html><html lang="en">/);
      expect(mail.text, mail.kind).toContain("— Acme");
      expect(mail.text).toContain("Questions? https://acme.example/help");
    }
  });

  it("give the time in the owner's zone and in UTC, in the account's language", () => {
    const english = messages("en", "Europe/Berlin").passwordChanged("a@x.example", ORIGIN, RESET);
    expect(english.text).toContain(
      "When: December 1, 2026 at 9:47 PM (Europe/Berlin), 2026-12-01 20:47 UTC. Browser: Firefox on Linux. Network: 198.51.100.x.",
    );
    const german = messages("de", "Europe/Berlin").passwordChanged("a@x.example", ORIGIN, RESET);
    expect(german.subject).toBe("Ihr Passwort für Acme wurde geändert");
    expect(german.text).toContain("Wann: 1. Dezember 2026 um 21:47 (Europe/Berlin), 2026-12-01 20:47 UTC.");
    expect(german.html).toMatch(/<html lang="de">/);
    expect(messages("en", null).passwordChanged("a@x.example", ORIGIN, RESET).text).toContain("When: 2026-12-01 20:47 UTC.");
  });

  it("name a factor in the mail's language", () => {
    expect(messages("de").factorAdded("a@x.example", ORIGIN, RESET, "An authenticator app").text).toContain(
      "Eine Authenticator-App wird jetzt bei der Anmeldung nach Ihrem Passwort abgefragt.",
    );
  });

  it("escape what a person chose (a passkey's name) in the HTML", () => {
    const mail = messages("en").passkeyAdded("a@x.example", ORIGIN, RESET, '<img src=x onerror="alert(1)">');
    expect(mail.html).not.toContain("<img src=x");
    expect(mail.html).toContain("&#60;img src=x");
  });

  it("have every sentence from a catalogue (the pseudo-locale marks each)", () => {
    for (const mail of everyKind("xx")) {
      const prose = mail.text.split("\n").filter((line) => line.trim() && !/^https?:\/\//.test(line));
      for (const line of prose) expect(line, `${mail.kind}: ${line}`).toMatch(/⟦/);
      expect(mail.subject).toMatch(/^⟦.*⟧$/);
    }
  });
});

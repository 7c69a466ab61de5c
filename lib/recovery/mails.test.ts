import { describe, expect, it } from "vitest";
import { createI18n } from "@/lib/i18n/i18n";
import { brandedMessages } from "./mails";
import { REFUSAL_REASONS, type DigestFigures } from "@/lib/digest/figures";
import { everyMail as everyKind, MAIL_BRAND, MAIL_ORIGIN as ORIGIN, mailsIn as messages } from "@/tests/fixtures/mails";

const RESET = "https://login.acme.example/forgot-password";

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

  it("say a support address as the address, with a mailto: link only in HTML (issue 60)", () => {
    const mail = brandedMessages({
      brand: { ...MAIL_BRAND, supportUrl: "mailto:help@acme.example", logoWidthPx: 160, logoHeightPx: 32 },
      t: createI18n({ defaultLocale: "en", pseudoLocale: false }).translator("en"),
      locale: "en",
      timeZone: null,
    }).passwordChanged("a@x.example", ORIGIN, RESET);
    expect(mail.text).toContain("Questions? help@acme.example");
    expect(mail.text).not.toContain("mailto:");
    expect(mail.html).toContain('Questions? <a href="mailto:help@acme.example" style="color:#b3261e">help@acme.example</a>');
    // A wordmark keeps its shape: the box mailBrandOf gave, as attributes mail clients read.
    expect(mail.html).toContain('alt="" width="160" height="32"');
  });

  it("give the time in the owner's zone and in UTC, in the account's language", () => {
    const english = messages("en", "Europe/Berlin").passwordChanged("a@x.example", ORIGIN, RESET);
    expect(english.text).toContain(
      "When: December 1, 2026 at 9:47 PM (Europe/Berlin), 2026-12-01 20:47 UTC. Browser: Firefox on Linux. Network: 198.51.100.x.",
    );
    const german = messages("de", "Europe/Berlin").passwordChanged("a@x.example", ORIGIN, RESET);
    expect(german.subject).toBe("Ihr Passwort für Acme wurde geändert");
    expect(german.text).toContain("Wann: 1. Dezember 2026 um 21:47 (Europe/Berlin), 2026-12-01 20:47 UTC.");
    // The browser's label is stored in English; the mail says it in its own language, as the account page does.
    expect(german.text).toMatch(/Firefox unter Linux/);
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

  describe("the weekly digest", () => {
    const figures: DigestFigures = {
      weekStartMs: Date.parse("2026-11-30T00:00:00Z"),
      attempts: 1234,
      refusals: { ...(Object.fromEntries(REFUSAL_REASONS.map((reason) => [reason, 0])) as DigestFigures["refusals"]), sign_in_failed: 40 },
      accountsLocked: 2,
      newDeviceConfirmations: 3,
      takenOver: 1,
      networks: [{ network: "203.0.113.x", count: 38 }],
    };
    const checks = [{ kind: "taken_over" as const, count: 1 }];

    it("says the week, every figure and what to check, to the contact, with no button", () => {
      const mail = messages("en").weeklyDigest("it@client.example", figures, checks);
      expect(mail.to).toBe("it@client.example");
      expect(mail.subject).toBe("Acme: sign-ins from 2026-11-30 to 2026-12-06");
      for (const line of [
        "Sign-in attempts: 1234",
        "• wrong email or password: 40",
        "Accounts locked: 2",
        "Accounts taken over: 1",
        "• 203.0.113.x: 38",
      ])
        expect(mail.text).toContain(line);
      expect(mail.text).toContain("accounts look taken over");
      expect(mail.text).toContain("contact for its weekly sign-in digest");
      expect(mail.links).toEqual([]);
      expect(mail.html).toContain("Refused or failed, by reason:<br>");
    });

    it("in German, every sentence from a catalogue", () => {
      expect(messages("de").weeklyDigest("it@client.example", figures, []).text).toContain("Übernommene Konten: 1");
      const mail = messages("xx").weeklyDigest("it@client.example", figures, checks);
      for (const line of mail.text.split("\n").filter((text) => text.trim())) expect(line, line).toMatch(/⟦/);
    });
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solve } from "../helpers/altcha";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";
import { altchaPayload, browserSignIn, createAccount, tokenSignIn } from "../helpers/browser";
import { recipientOf, startMailbox } from "../helpers/smtp";
import { onEachDatabase } from "../helpers/each-database";

type Gatehouse = import("@/lib/app").Gatehouse;
type RegisterRoute = typeof import("@/app/api/register/route");
type TokenRoute = typeof import("@/app/api/v1/authentication/token/route");
type LocaleRoute = typeof import("@/app/api/locale/route");
type ChallengeRoute = typeof import("@/app/api/altcha/challenge/route");

/**
 * Refusals in the request's language through the real route handlers: the `error` code never
 * changes, the `message` (and each field's) follows the language cookie, else Accept-Language,
 * else DEFAULT_LOCALE; and the footer's switch (POST /api/locale) sets that cookie.
 */
export function languageSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`languages on ${label}`, () => {
    let database: TestDatabase;
    let gate: Gatehouse;
    let register: RegisterRoute;
    let token: TokenRoute;
    let locale: LocaleRoute;
    let challenge: ChallengeRoute;
    let smtp: Awaited<ReturnType<typeof startMailbox>>;

    beforeAll(async () => {
      announcePeerHeader();
      database = await makeDatabase();
      smtp = await startMailbox();
      gate = await servedGatehouse(database.url, smtp.settings);
      register = await import("@/app/api/register/route");
      token = await import("@/app/api/v1/authentication/token/route");
      locale = await import("@/app/api/locale/route");
      challenge = await import("@/app/api/altcha/challenge/route");
      const { registerAccount } = await import("@/lib/users/accounts");
      await registerAccount(gate.prisma, { email: "anna@example.com", password: "the right passphrase" }, gate.hasher, Date.now());
    });

    afterAll(async () => {
      await closeServed(gate);
      await smtp?.close();
      await database?.dispose();
    });

    const postRegister = (headers: Record<string, string>, body = { email: "not an address", password: "x" }) =>
      register.POST(
        new Request("http://localhost/api/register", {
          method: "POST",
          headers: { "content-type": "application/json", [PEER_HEADER]: freshAddress(), ...headers },
          body: JSON.stringify(body),
        }),
      );

    it("answers a German browser in German, with the same error code and field names", async () => {
      const res = await postRegister({ "accept-language": "de-DE,de;q=0.9,en;q=0.5" });
      expect(res.status).toBe(400);
      expect(res.headers.get("content-language")).toBe("de");
      expect(await res.json()).toEqual({
        error: "invalid_input",
        message: "Prüfen Sie die markierten Felder.",
        fields: { email: "Geben Sie eine gültige E-Mail-Adresse ein.", password: "Verwenden Sie mindestens 15 Zeichen." },
      });
    });

    it("puts the visitor's choice (the cookie) before Accept-Language", async () => {
      const res = await postRegister({ "accept-language": "de", cookie: "gatehouse-locale=en" });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: "invalid_input", message: "Check the highlighted fields." });
    });

    it("falls back to the default for an unknown or malformed language, never a 500", async () => {
      const variants: Record<string, string>[] = [
        { "accept-language": "fr-FR" },
        { "accept-language": ";;q=;,*;q=x" },
        { "accept-language": "de-".repeat(600) },
        { cookie: "gatehouse-locale=../../etc/passwd" },
        { cookie: "gatehouse-locale=%E0%A4%A", "accept-language": "zz" },
      ];
      for (const headers of variants) {
        const res = await postRegister(headers);
        expect(res.status, JSON.stringify(headers)).toBe(400);
        expect(await res.json()).toMatchObject({ error: "invalid_input", message: "Check the highlighted fields." });
      }
    });

    it("says the token API's invalid_credentials in German too, and nothing else changes", async () => {
      // Each on a username of its own: after a first failure the answer would be a device confirmation.
      const send = async (acceptLanguage: string) => {
        const challenged = await challenge.GET(
          new Request("http://localhost/api/altcha/challenge", { headers: { [PEER_HEADER]: freshAddress() } }),
        );
        return token.POST(
          new Request("http://localhost/api/v1/authentication/token", {
            method: "POST",
            headers: { "content-type": "application/json", [PEER_HEADER]: freshAddress(), "accept-language": acceptLanguage },
            body: JSON.stringify({
              email: `anna-${acceptLanguage}@example.com`,
              password: "a wrong passphrase",
              altcha: await solve(await challenged.json()),
            }),
          }),
        );
      };
      const german = await send("de");
      expect(german.status).toBe(401);
      expect(await german.json()).toEqual({
        error: "invalid_credentials",
        message:
          "Mit dieser E-Mail-Adresse und diesem Passwort konnten wir Sie nicht anmelden: Prüfen Sie beides, oder bestätigen Sie zuerst Ihre Adresse mit dem Link, den wir Ihnen gemailt haben.",
      });
      const english = await send("en-GB");
      expect(await english.json()).toMatchObject({
        error: "invalid_credentials",
        message: expect.stringMatching(/^We could not sign you in/),
      });
    });

    const choose = (body: string, headers: Record<string, string> = {}) =>
      locale.POST(
        new Request("http://localhost/api/locale", {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin", ...headers },
          body,
        }),
      );

    it("sets the language cookie from the footer's form and sends the browser back to its page", async () => {
      const res = await choose("locale=de&returnTo=%2Fsign-in%3Fx%3D1");
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe("/sign-in?x=1");
      expect(res.headers.get("set-cookie")).toMatch(/^gatehouse-locale=de; Path=\/; Max-Age=31536000; HttpOnly; SameSite=Lax/);
    });

    it("clears the choice for a language it has no catalogue for, and never redirects off the site", async () => {
      for (const value of ["fr", "DE", "de-DE-x", "../en", ""]) {
        const res = await choose(`locale=${encodeURIComponent(value)}&returnTo=%2F%2Fevil.example`);
        expect(res.status, value).toBe(303);
        expect(res.headers.get("location")).toBe("/");
        expect(res.headers.get("set-cookie")).toMatch(/^gatehouse-locale=; Path=\/; Max-Age=0/);
      }
    });

    it("answers JSON with 204, or 400 invalid_input in the request's language; a cross-site post with 403", async () => {
      const json = (value: unknown, headers: Record<string, string> = {}) =>
        choose(JSON.stringify(value), { "content-type": "application/json", ...headers });
      const ok = await json({ locale: "de" });
      expect(ok.status).toBe(204);
      expect(ok.headers.get("set-cookie")).toMatch(/^gatehouse-locale=de;/);
      const bad = await json({ locale: { de: true } }, { "accept-language": "de" });
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ error: "invalid_input", message: "Wählen Sie eine der angebotenen Sprachen." });
      const crossSite = await choose("locale=de&returnTo=%2F", { "sec-fetch-site": "cross-site" });
      expect(crossSite.status).toBe(403);
      expect(crossSite.headers.get("set-cookie")).toBeNull();
    });
    it("mails an account in the language of its last sign-in from a known device, never a new device's", async () => {
      const email = "berta@example.com";
      const password = "the right passphrase";
      // Created with no language of its own (the default, English); its first sign-in, from a new
      // browser, records none either.
      await createAccount(gate, email, password);
      const first = await browserSignIn(email, password, { headers: { "accept-language": "en" } });
      expect(first.status).toBe(200);
      const deviceCookie = first.headers
        .getSetCookie()
        .find((cookie) => /gatehouse-device=/.test(cookie))!
        .split(";")[0]!;
      const subjects = async () => {
        await gate.background.idle();
        await gate.mailer.idle();
        return smtp.received.filter((mail) => recipientOf(mail) === email).map((mail) => mail.subject ?? "");
      };
      const lastLocale = async () =>
        (await gate.prisma.user.findUniqueOrThrow({ where: { email }, select: { lastLocale: true } })).lastLocale;
      // A mail asked for in English, with no sign-in in between, still comes in the account's last language.
      const forgot = async () => {
        const forgot = await import("@/app/api/password/forgot/route");
        const res = await forgot.POST(
          new Request("http://localhost/api/password/forgot", {
            method: "POST",
            headers: { "content-type": "application/json", [PEER_HEADER]: freshAddress(), "accept-language": "en" },
            body: JSON.stringify({ email, altcha: await altchaPayload() }),
          }),
        );
        expect(res.status).toBe(202);
      };

      // A new device signs in in German with the password alone: whoever holds it cannot choose the
      // language of the owner's warning about it, nor of the mails after it.
      expect((await browserSignIn(email, password, { headers: { "accept-language": "de-DE,de;q=0.9" } })).status).toBe(200);
      expect(await subjects()).toEqual(["New sign-in to your Gatehouse account"]);
      expect(await lastLocale()).toBeNull();

      // The owner's known browser signs in in German: the next mail is German.
      const known = await browserSignIn(email, password, { headers: { "accept-language": "de-DE,de;q=0.9" }, cookie: deviceCookie });
      expect(known.status).toBe(200);
      await forgot();
      expect((await subjects()).at(-1)).toBe("Setzen Sie Ihr Passwort für Gatehouse zurück");
      expect(await gate.prisma.user.findUnique({ where: { email }, select: { locale: true, lastLocale: true } })).toEqual({
        locale: null,
        lastLocale: "de",
      });

      // An app that states no language leaves it as it is; its known device stating English sets it.
      const app = await tokenSignIn(email, password);
      expect(app.status).toBe(200);
      // Each sign-in replaces the device token it came with.
      const tokenOf = async (res: Response) => ((await res.json()) as { device_token: string }).device_token;
      const again = await tokenSignIn(email, password, { deviceToken: await tokenOf(app) });
      expect(again.status).toBe(200);
      expect(await lastLocale()).toBe("de");
      const english = await tokenSignIn(email, password, { deviceToken: await tokenOf(again), headers: { "accept-language": "en-GB" } });
      expect(english.status).toBe(200);
      await forgot();
      expect((await subjects()).at(-1)).toBe("Reset your Gatehouse password");
    });
  });
}

onEachDatabase("languages", ({ label, makeDatabase }) => languageSuite(label, makeDatabase));

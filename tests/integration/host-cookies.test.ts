import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserSignIn, browserSignOut, createAccount, deviceCookieOf, sessionPairOf, sessionWith } from "../helpers/browser";
import { freshPglite, type TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";

const PASSWORD = "the right passphrase";

/**
 * Under an https NEXTAUTH_URL every cookie of the cookie room (lib/http/cookies.ts) is __Host-
 * (Secure, Path=/, no Domain), and the cookie the sign-in route writes is the one the session and
 * sign-out routes read.
 */
describe("cookies under an https NEXTAUTH_URL", () => {
  let database: TestDatabase;
  let gate: import("@/lib/app").Gatehouse;

  beforeAll(async () => {
    announcePeerHeader();
    database = await freshPglite();
    gate = await servedGatehouse(database.url, { NEXTAUTH_URL: "https://login.example.com" });
    await createAccount(gate, "host@example.com", PASSWORD);
  });

  afterAll(async () => {
    await closeServed(gate);
    await database?.dispose();
  });

  it("sets the session and device cookies with __Host- and nothing a sibling subdomain could shadow", async () => {
    const res = await browserSignIn("host@example.com", PASSWORD, { headers: { origin: "https://login.example.com" } });
    expect(res.status).toBe(200);
    const session = res.headers.getSetCookie().find((value) => value.includes("session-token="))!;
    expect(session).toMatch(/^__Host-next-auth\.session-token=[^;]+; Path=\/;/);
    expect(session).toContain("; Secure");
    expect(session).not.toMatch(/Domain=/i);
    for (const value of res.headers.getSetCookie()) {
      expect(value).toMatch(/^__Host-/);
      expect(value).toContain("; Secure");
    }
    expect(deviceCookieOf(res)).not.toBeNull();

    const pair = sessionPairOf(res)!;
    expect((await sessionWith(pair)).body).toMatchObject({ user: { email: "host@example.com" } });
    // The plain name is not read under https: a cookie planted without the prefix is no session.
    expect((await sessionWith(pair.replace(/^__Host-/, ""))).body).toEqual({});

    const out = await browserSignOut(pair);
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie().some((value) => /^__Host-next-auth\.session-token=;/.test(value))).toBe(true);
    expect((await sessionWith(pair)).body).toEqual({});
  });

  // Issue 59: the language cookie was the one cookie without the prefix, so a sibling subdomain could set it.
  it("sets the language cookie as __Host-, and reads only that name", async () => {
    const { POST } = await import("@/app/api/locale/route");
    const res = await POST(
      new Request("https://login.example.com/api/locale", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin", [PEER_HEADER]: freshAddress() },
        body: "locale=de&returnTo=%2F",
      }),
    );
    expect(res.status).toBe(303);
    const set = res.headers.get("set-cookie")!;
    expect(set).toMatch(/^__Host-gatehouse-locale=de; Path=\/;/);
    expect(set).toContain("; Secure");
    expect(set).not.toMatch(/Domain=/i);
    expect(gate.i18n.localeOf(new Headers({ cookie: "__Host-gatehouse-locale=de" }))).toBe("de");
    // A plain-named cookie, which a sibling subdomain can plant, is no choice under https.
    expect(gate.i18n.localeOf(new Headers({ cookie: "gatehouse-locale=de" }))).toBe(gate.i18n.defaultLocale);
  });
});

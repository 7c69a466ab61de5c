import { NextRequest } from "next/server";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { browserSignOut, createAccount, refreshTokens, sessionWith, signedInBrowser, tokenSignIn } from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";
import { onEachDatabase } from "../helpers/each-database";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the right passphrase";
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * Browser sessions that end (design invariant 3), through the real route handlers and a real
 * database: a copied cookie dies with its session on /api/auth/session and the cookie-authenticated
 * API, and sessions end when idle or old. The clock is the app's own (gate.clock), moved by the test.
 */
export function sessionsSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`browser sessions on ${label}`, () => {
    let database: TestDatabase;
    let gate: Gate;

    beforeAll(async () => {
      announcePeerHeader();
      database = await makeDatabase();
      gate = await servedGatehouse(database.url, { HASH_QUEUE: "100" });
      for (const name of ["copied", "idle", "active", "absolute", "touch", "csrf", "owner", "stranger", "everywhere", "apiowner"])
        await createAccount(gate, `${name}@example.com`, PASSWORD);
    });

    afterEach(() => vi.restoreAllMocks());

    afterAll(async () => {
      await closeServed(gate);
      await database?.dispose();
    });

    /** Moves the app's clock to `atMs` for every later call. */
    const clockAt = (atMs: number) => vi.spyOn(gate, "clock").mockReturnValue(atMs);

    const me = async (cookie: string) =>
      (await import("@/app/api/v1/me/route")).GET(
        new NextRequest("http://localhost/api/v1/me", { headers: { cookie, [PEER_HEADER]: freshAddress() } }),
      );

    const buildReport = async (cookie: string) =>
      (await import("@/app/api/v1/reports/route")).POST(
        new NextRequest("http://localhost/api/v1/reports", {
          method: "POST",
          headers: { cookie, "content-type": "application/json", "sec-fetch-site": "same-origin", [PEER_HEADER]: freshAddress() },
          body: "{}",
        }),
      );

    /** The cookie answers as a live session on every route that trusts one. */
    async function expectLive(cookie: string, email: string) {
      const session = await sessionWith(cookie);
      expect(session.status).toBe(200);
      expect(session.body).toMatchObject({ user: { email } });
      expect((await me(cookie)).status).toBe(200);
    }

    /** The cookie is no session anywhere: an empty session (cookie cleared), and 401 JSON from the API. */
    async function expectDead(cookie: string) {
      const session = await sessionWith(cookie);
      expect(session.status).toBe(200);
      expect(session.body).toEqual({});
      expect(session.cleared).toBe(true);
      for (const res of [await me(cookie), await buildReport(cookie)]) {
        expect(res.status).toBe(401);
        expect(await res.json()).toMatchObject({ error: "unauthenticated" });
      }
    }

    it("a copy of the cookie dies at sign-out on /api/auth/session, GET /api/v1/me and POST /api/v1/reports", async () => {
      const cookie = await signedInBrowser("copied@example.com", PASSWORD);
      await expectLive(cookie, "copied@example.com");
      expect((await buildReport(cookie)).status).toBe(201);

      const out = await browserSignOut(cookie);
      expect(out.status).toBe(200);
      expect(out.headers.getSetCookie().some((value) => /session-token=;/.test(value))).toBe(true);
      // The copy still decrypts and has not expired as a JWT: only the server record says no.
      const errors = vi.spyOn(gate.log, "error");
      await expectDead(cookie);
      // An ended session is an answer, not a server error: nothing at error level.
      expect(errors).not.toHaveBeenCalled();
    });

    it("ends a session idle for SESSION_MAX_AGE_SECONDS (8 h), not before", async () => {
      const t0 = Date.now();
      clockAt(t0);
      const cookie = await signedInBrowser("idle@example.com", PASSWORD);
      clockAt(t0 + 8 * HOUR_MS - 60_000);
      await expectLive(cookie, "idle@example.com");
      // That visit was activity: 8 h counts again from it.
      clockAt(t0 + 16 * HOUR_MS - 120_000);
      await expectLive(cookie, "idle@example.com");
      clockAt(t0 + 24 * HOUR_MS);
      await expectDead(cookie);
    });

    it("ends an active session at SESSION_ABSOLUTE_LIFETIME_SECONDS (30 days) however often it is used", async () => {
      const t0 = Date.now();
      clockAt(t0);
      const cookie = await signedInBrowser("absolute@example.com", PASSWORD);
      for (let atMs = t0 + 7 * HOUR_MS; atMs < t0 + 30 * DAY_MS; atMs += 7 * HOUR_MS) {
        clockAt(atMs);
        expect((await sessionWith(cookie)).body, new Date(atMs).toISOString()).toMatchObject({ user: { email: "absolute@example.com" } });
      }
      clockAt(t0 + 30 * DAY_MS);
      await expectDead(cookie);
    });

    it("writes lastSeenAt at most once a minute, however many requests come", async () => {
      const t0 = Date.now();
      clockAt(t0);
      const cookie = await signedInBrowser("touch@example.com", PASSWORD);
      const lastSeen = async () =>
        (await gate.prisma.browserSession.findFirstOrThrow({ orderBy: { createdAt: "desc" } })).lastSeenAt.getTime();
      clockAt(t0 + 30_000);
      for (let i = 0; i < 3; i++) await sessionWith(cookie);
      expect(await lastSeen()).toBe(t0);
      clockAt(t0 + 61_000);
      await sessionWith(cookie);
      expect(await lastSeen()).toBe(t0 + 61_000);
    });

    describe("when the session store fails, nothing is trusted unchecked and nothing answers 500", () => {
      it("a sign-in whose session record cannot be written gets 503, no cookie, and no device or event either", async () => {
        const { browserSignIn, deviceCookieOf, sessionCookieOf } = await import("../helpers/browser");
        const user = await gate.prisma.user.findUniqueOrThrow({ where: { email: "touch@example.com" } });
        const written = async () => ({
          devices: await gate.prisma.knownDevice.count(),
          sessions: await gate.prisma.browserSession.count({ where: { userId: user.id } }),
          signIns: await gate.prisma.securityEvent.count({ where: { userId: user.id, kind: "sign_in_succeeded" } }),
        });
        const before = await written();
        // The database itself refuses the row, in the statement that writes it (not a mock of the store).
        await gate.prisma.$executeRawUnsafe(
          `CREATE FUNCTION refuse_session() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no sessions today'; END $$`,
        );
        await gate.prisma.$executeRawUnsafe(
          `CREATE TRIGGER refuse_session BEFORE INSERT ON "BrowserSession" FOR EACH ROW EXECUTE FUNCTION refuse_session()`,
        );
        let res: Response;
        try {
          res = await browserSignIn("touch@example.com", PASSWORD);
        } finally {
          await gate.prisma.$executeRawUnsafe(`DROP TRIGGER refuse_session ON "BrowserSession"`);
          await gate.prisma.$executeRawUnsafe(`DROP FUNCTION refuse_session()`);
        }
        expect(res.status).toBe(503);
        expect(await res.json()).toMatchObject({ error: "unavailable" });
        expect(sessionCookieOf(res)).toBeNull();
        expect(deviceCookieOf(res)).toBeNull();
        // All or none: the device and the "signed in" event went with the session that could not be written.
        expect(await written()).toEqual(before);
        expect((await browserSignIn("touch@example.com", PASSWORD)).status).toBe(200);
      });

      it("a session that cannot be checked is no session: empty on /api/auth/session, 503 from the API", async () => {
        const cookie = await signedInBrowser("touch@example.com", PASSWORD);
        vi.spyOn(gate.sessions, "find").mockRejectedValue(new Error("database away"));
        expect((await sessionWith(cookie)).body).toEqual({});
        const res = await me(cookie);
        expect(res.status).toBe(503);
        expect(await res.json()).toMatchObject({ error: "unavailable" });
      });
    });

    describe("cookie-authenticated API writes come from the app's own pages (CSRF)", () => {
      const write = async (path: "/api/v1/reports" | "/api/v1/download-tokens", headers: Record<string, string>, body = "{}") => {
        const route =
          path === "/api/v1/reports" ? await import("@/app/api/v1/reports/route") : await import("@/app/api/v1/download-tokens/route");
        return route.POST(
          new NextRequest(`http://localhost${path}`, { method: "POST", headers: { [PEER_HEADER]: freshAddress(), ...headers }, body }),
        );
      };

      it("refuses a cross-site or sibling-subdomain cookie POST with 403 JSON, and builds nothing", async () => {
        const cookie = await signedInBrowser("csrf@example.com", PASSWORD);
        const before = await gate.prisma.report.count();
        const shapes: Record<string, string>[] = [
          { "sec-fetch-site": "cross-site", "content-type": "application/json" },
          { "sec-fetch-site": "same-site", "content-type": "application/json", origin: "http://localhost:3000" },
          { origin: "https://evil.example", "content-type": "application/json" },
          { origin: "null", "content-type": "application/json" },
          { "content-type": "application/json" },
        ];
        for (const path of ["/api/v1/reports", "/api/v1/download-tokens"] as const) {
          for (const headers of shapes) {
            const res = await write(path, { cookie, ...headers });
            expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(403);
            expect(await res.json()).toMatchObject({ error: "csrf_invalid" });
          }
        }
        expect(await gate.prisma.report.count()).toBe(before);
      });

      it("refuses a same-origin cookie POST that is not JSON (a form or text/plain needs no preflight) with 415", async () => {
        const cookie = await signedInBrowser("csrf@example.com", PASSWORD);
        for (const type of [
          "text/plain",
          "application/x-www-form-urlencoded",
          "multipart/form-data; boundary=x",
          "application/json; x=1",
        ]) {
          const res = await write("/api/v1/reports", { cookie, "sec-fetch-site": "same-origin", "content-type": type });
          expect(res.status, type).toBe(415);
        }
        expect((await write("/api/v1/reports", { cookie, "sec-fetch-site": "same-origin" }, "")).status).toBe(415);
      });

      it("takes the app's own pages' writes: Sec-Fetch-Site same-origin, or the app's Origin", async () => {
        const cookie = await signedInBrowser("csrf@example.com", PASSWORD);
        const built = await write("/api/v1/reports", { cookie, "sec-fetch-site": "same-origin", "content-type": "application/json" });
        expect(built.status).toBe(201);
        const body = JSON.stringify({ report_id: ((await built.json()) as { id: string }).id });
        expect(
          (await write("/api/v1/download-tokens", { cookie, "sec-fetch-site": "same-origin", "content-type": "application/json" }, body))
            .status,
        ).toBe(201);
        expect(
          (await write("/api/v1/download-tokens", { cookie, origin: "http://localhost:3000", "content-type": "application/json" }, body))
            .status,
        ).toBe(201);
      });

      it("leaves Bearer requests as they were: no Origin, any site, any content type", async () => {
        const { apiTokenFor } = await import("../helpers/tokens");
        const userId = (await gate.prisma.user.findUniqueOrThrow({ where: { email: "csrf@example.com" } })).id;
        const token = await apiTokenFor(gate, userId);
        const res = await write("/api/v1/reports", { authorization: `Bearer ${token}`, "sec-fetch-site": "cross-site" }, "");
        expect(res.status).toBe(201);
      });
    });

    describe("the owner ends sessions from the account page", () => {
      async function sidOf(cookie: string): Promise<string> {
        const { decode } = await import("next-auth/jwt");
        const claims = await decode({ token: cookie.split("=")[1]!, secret: gate.config.session.secret });
        return claims!.sid as string;
      }

      async function formTokenOf(cookie: string) {
        const { sessionFormToken } = await import("@/lib/http/form-token");
        return sessionFormToken(gate.config.session.secret, await sidOf(cookie));
      }

      /** A form post from the account page, as a browser sends it without JavaScript. */
      async function accountForm(
        path: "revoke" | "revoke-others",
        cookie: string,
        fields: Record<string, string>,
        headers: Record<string, string> = { "sec-fetch-site": "same-origin" },
      ) {
        const route =
          path === "revoke"
            ? await import("@/app/api/account/sessions/revoke/route")
            : await import("@/app/api/account/sessions/revoke-others/route");
        return route.POST(
          new NextRequest(`http://localhost/api/account/sessions/${path}`, {
            method: "POST",
            headers: { cookie, "content-type": "application/x-www-form-urlencoded", [PEER_HEADER]: freshAddress(), ...headers },
            body: new URLSearchParams(fields).toString(),
          }),
        );
      }

      async function eventKinds(email: string) {
        const user = await gate.prisma.user.findUniqueOrThrow({ where: { email } });
        return (await gate.events.recent(user.id, 50)).map((event) => event.kind);
      }

      it("revokes one browser session from another: the revoked one is dead at once, the other lives on", async () => {
        const laptop = await signedInBrowser("owner@example.com", PASSWORD);
        const phone = await signedInBrowser("owner@example.com", PASSWORD);
        const res = await accountForm("revoke", laptop, { formToken: await formTokenOf(laptop), kind: "browser", id: await sidOf(phone) });
        expect(res.status).toBe(303);
        expect(res.headers.get("location")).toBe("/account?notice=browser_session_revoked");
        await expectDead(phone);
        await expectLive(laptop, "owner@example.com");
        expect(await eventKinds("owner@example.com")).toContain("browser_session_revoked");
        // Again: nothing left to end, and it says so.
        const again = await accountForm("revoke", laptop, {
          formToken: await formTokenOf(laptop),
          kind: "browser",
          id: await sidOf(phone),
        });
        expect(again.headers.get("location")).toBe("/account?notice=already_ended");
      });

      it("ends nothing of another user's: a stranger's session id changes nothing", async () => {
        const owner = await signedInBrowser("owner@example.com", PASSWORD);
        const stranger = await signedInBrowser("stranger@example.com", PASSWORD);
        const res = await accountForm("revoke", stranger, {
          formToken: await formTokenOf(stranger),
          kind: "browser",
          id: await sidOf(owner),
        });
        expect(res.headers.get("location")).toBe("/account?notice=already_ended");
        await expectLive(owner, "owner@example.com");
        const tokens = (await (await tokenSignIn("owner@example.com", PASSWORD)).json()) as { refresh_token: string };
        const family = (await gate.prisma.refreshToken.findFirstOrThrow({ orderBy: { createdAt: "desc" } })).familyId;
        expect(
          (await accountForm("revoke", stranger, { formToken: await formTokenOf(stranger), kind: "api", id: family })).headers.get(
            "location",
          ),
        ).toBe("/account?notice=already_ended");
        expect((await refreshTokens(tokens.refresh_token)).status).toBe(200);
      });

      it("refuses a form from another site, without the form token, or with another session's token (403), ending nothing", async () => {
        const owner = await signedInBrowser("owner@example.com", PASSWORD);
        const other = await signedInBrowser("owner@example.com", PASSWORD);
        const target = { kind: "browser", id: await sidOf(other) };
        const attempts = [
          await accountForm("revoke", owner, { formToken: await formTokenOf(owner), ...target }, { "sec-fetch-site": "cross-site" }),
          await accountForm("revoke", owner, { formToken: await formTokenOf(owner), ...target }, { origin: "https://evil.example" }),
          await accountForm("revoke", owner, target),
          await accountForm("revoke", owner, { formToken: await formTokenOf(other), ...target }),
          await accountForm("revoke-others", owner, {}),
          await accountForm("revoke-others", owner, { formToken: "x".repeat(43) }),
        ];
        for (const res of attempts) {
          expect(res.status).toBe(403);
          expect(await res.json()).toMatchObject({ error: "csrf_invalid" });
        }
        await expectLive(other, "owner@example.com");
      });

      it("refuses a signed-out session's form (401) and bad fields (400), never a 500", async () => {
        const owner = await signedInBrowser("owner@example.com", PASSWORD);
        const token = await formTokenOf(owner);
        const cases: Record<string, string>[] = [
          { kind: "browser" },
          { kind: "api", id: "not-a-uuid" },
          { kind: "other", id: "x" },
          { kind: "browser", id: "x".repeat(65) },
        ];
        for (const fields of cases) {
          const res = await accountForm("revoke", owner, { formToken: token, ...fields });
          expect(res.status, JSON.stringify(fields)).toBe(400);
          expect(await res.json()).toMatchObject({ error: "invalid_input" });
        }
        await browserSignOut(owner);
        const res = await accountForm("revoke-others", owner, { formToken: token });
        expect(res.status).toBe(401);
        expect(await res.json()).toMatchObject({ error: "unauthenticated" });
      });

      it("revokes an API session: its refresh token is refused at once", async () => {
        const browser = await signedInBrowser("apiowner@example.com", PASSWORD);
        const tokens = (await (await tokenSignIn("apiowner@example.com", PASSWORD)).json()) as { refresh_token: string };
        const { listLiveFamilies } = await import("@/lib/tokens/refresh-tokens");
        const user = await gate.prisma.user.findUniqueOrThrow({ where: { email: "apiowner@example.com" } });
        const families = await listLiveFamilies(gate.prisma, user.id, Date.now());
        const res = await accountForm("revoke", browser, { formToken: await formTokenOf(browser), kind: "api", id: families[0]!.familyId });
        expect(res.headers.get("location")).toBe("/account?notice=api_session_revoked");
        const refused = await refreshTokens(tokens.refresh_token);
        expect(refused.status).toBe(401);
        expect(await refused.json()).toMatchObject({ error: "invalid_token" });
        expect(await eventKinds("apiowner@example.com")).toContain("api_session_revoked");
      });

      it("signs out everywhere else: every other browser and API session ends, this one lives", async () => {
        const here = await signedInBrowser("everywhere@example.com", PASSWORD);
        const others = [
          await signedInBrowser("everywhere@example.com", PASSWORD),
          await signedInBrowser("everywhere@example.com", PASSWORD),
        ];
        const apps = [];
        for (let i = 0; i < 2; i++)
          apps.push(((await (await tokenSignIn("everywhere@example.com", PASSWORD)).json()) as { refresh_token: string }).refresh_token);
        // A family rotated once: its live token is the second one.
        const rotated = ((await (await refreshTokens(apps[1]!)).json()) as { refresh_token: string }).refresh_token;
        const res = await accountForm("revoke-others", here, { formToken: await formTokenOf(here) });
        expect(res.headers.get("location")).toBe("/account?notice=signed_out_everywhere_else");
        for (const cookie of others) await expectDead(cookie);
        for (const token of [apps[0]!, rotated]) expect((await refreshTokens(token)).status).toBe(401);
        await expectLive(here, "everywhere@example.com");
        expect(await eventKinds("everywhere@example.com")).toContain("signed_out_everywhere_else");
      });
    });
  });
}

onEachDatabase("browser sessions", ({ label, makeDatabase }) => sessionsSuite(label, makeDatabase));

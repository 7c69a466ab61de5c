import { NextRequest } from "next/server";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { browserSignOut, createAccount, sessionWith, signedInBrowser } from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";

type Gate = import("@/lib/auth/gatehouse").Gatehouse;

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
      Object.assign(process.env, { DATABASE_URL: database.url, HASH_QUEUE: "100" });
      gate = await (await import("@/lib/auth/gatehouse")).gatehouse();
      for (const name of ["copied", "idle", "active", "absolute", "touch", "csrf"]) await createAccount(gate, `${name}@example.com`, PASSWORD);
    });

    afterEach(() => vi.restoreAllMocks());

    afterAll(async () => {
      await (await (await import("@/lib/db/client")).getDatabase()).close();
      await database?.dispose();
    });

    /** Moves the app's clock to `atMs` for every later call. */
    const clockAt = (atMs: number) => vi.spyOn(gate, "clock").mockReturnValue(atMs);

    const me = async (cookie: string) =>
      (await import("@/app/api/v1/me/route")).GET(new NextRequest("http://localhost/api/v1/me", { headers: { cookie, [PEER_HEADER]: freshAddress() } }));

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
      await expectDead(cookie);
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
      const { prisma } = await import("@/lib/db/client");
      const lastSeen = async () => (await (await prisma()).browserSession.findFirstOrThrow({ orderBy: { createdAt: "desc" } })).lastSeenAt.getTime();
      clockAt(t0 + 30_000);
      for (let i = 0; i < 3; i++) await sessionWith(cookie);
      expect(await lastSeen()).toBe(t0);
      clockAt(t0 + 61_000);
      await sessionWith(cookie);
      expect(await lastSeen()).toBe(t0 + 61_000);
    });

    describe("cookie-authenticated API writes come from the app's own pages (CSRF)", () => {
      const write = async (path: "/api/v1/reports" | "/api/v1/download-tokens", headers: Record<string, string>, body = "{}") => {
        const route = path === "/api/v1/reports" ? await import("@/app/api/v1/reports/route") : await import("@/app/api/v1/download-tokens/route");
        return route.POST(new NextRequest(`http://localhost${path}`, { method: "POST", headers: { [PEER_HEADER]: freshAddress(), ...headers }, body }));
      };

      it("refuses a cross-site or sibling-subdomain cookie POST with 403 JSON, and builds nothing", async () => {
        const cookie = await signedInBrowser("csrf@example.com", PASSWORD);
        const { prisma } = await import("@/lib/db/client");
        const before = await (await prisma()).report.count();
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
        expect(await (await prisma()).report.count()).toBe(before);
      });

      it("refuses a same-origin cookie POST that is not JSON (a form or text/plain needs no preflight) with 415", async () => {
        const cookie = await signedInBrowser("csrf@example.com", PASSWORD);
        for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; x=1"]) {
          const res = await write("/api/v1/reports", { cookie, "sec-fetch-site": "same-origin", "content-type": type });
          expect(res.status, type).toBe(415);
        }
        expect((await write("/api/v1/reports", { cookie, "sec-fetch-site": "same-origin" }, "")).status).toBe(415);
      });

      it("takes the app's own pages' writes: Sec-Fetch-Site same-origin, or the app's Origin", async () => {
        const cookie = await signedInBrowser("csrf@example.com", PASSWORD);
        expect((await write("/api/v1/download-tokens", { cookie, "sec-fetch-site": "same-origin", "content-type": "application/json" })).status).toBe(201);
        expect((await write("/api/v1/download-tokens", { cookie, origin: "http://localhost:3000", "content-type": "application/json" })).status).toBe(201);
      });

      it("leaves Bearer requests as they were: no Origin, any site, any content type", async () => {
        const { issueAccessToken } = await import("@/lib/tokens/access-token");
        const { prisma } = await import("@/lib/db/client");
        const userId = (await (await prisma()).user.findUniqueOrThrow({ where: { email: "csrf@example.com" } })).id;
        const { token } = await issueAccessToken(userId, gate.config.API_TOKEN_SECRET, 900, Date.now());
        const res = await write("/api/v1/reports", { authorization: `Bearer ${token}`, "sec-fetch-site": "cross-site" }, "");
        expect(res.status).toBe(201);
      });
    });
  });
}

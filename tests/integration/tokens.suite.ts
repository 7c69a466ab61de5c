import { createHash, randomBytes } from "node:crypto";
import { NextRequest } from "next/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solve } from "../helpers/altcha";
import { browserSignIn, sessionCookieOf } from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";
import { apiTokenFor } from "../helpers/tokens";
import { onEachDatabase } from "../helpers/each-database";

type TokenRoute = typeof import("@/app/api/v1/authentication/token/route");
type RefreshRoute = typeof import("@/app/api/v1/authentication/token/refresh/route");
type MeRoute = typeof import("@/app/api/v1/me/route");
type ChallengeRoute = typeof import("@/app/api/altcha/challenge/route");
type Gatehouse = import("@/lib/app").Gatehouse;
type TokenPair = { access_token: string; token_type: string; expires_in: number; refresh_token: string; refresh_expires_in: number };

const TOKEN_PATH = "/api/v1/authentication/token";
const REFRESH_PATH = "/api/v1/authentication/token/refresh";
const PASSWORD = "the right passphrase";
const WRONG = "a wrong passphrase";
const ACCESS_TTL_SECONDS = 900;
const REFRESH_TTL_SECONDS = 30 * 86_400;

const INVALID_CREDENTIALS = {
  error: "invalid_credentials",
  message: "We could not sign you in with that email and password: check both, or confirm your address first with the link we emailed you.",
};
const REFRESH_UNKNOWN = { error: "invalid_token", message: "The refresh token is not valid." };
const REFRESH_EXPIRED = { error: "invalid_token", message: "The refresh token has expired. Sign in again." };
const REFRESH_REVOKED = { error: "invalid_token", message: "The refresh token has been revoked. Sign in again." };
const REFRESH_REUSED = {
  error: "invalid_token",
  message: "This refresh token was already used, so the session it belongs to has been revoked. Sign in again.",
};
const ACCESS_INVALID = { error: "invalid_token", message: "The access token is not valid." };
const ACCESS_EXPIRED = { error: "invalid_token", message: "The access token has expired. Refresh it." };

/** Computed here, not with the module's helper, so a change to the stored form fails the test. */
const sha256Hex = (value: string) => createHash("sha256").update(value).digest("hex");
const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

/** Whole seconds until `atMs`, rounded up, for a request answered somewhere in [fromMs, toMs]. */
function secondsUntil(atMs: number, fromMs: number, toMs: number) {
  return { min: Math.ceil((atMs - toMs) / 1000), max: Math.ceil((atMs - fromMs) / 1000) };
}

/**
 * The token API (issue, refresh, /me) through its real route handlers, the real limiter, ALTCHA
 * solutions from the real challenge route and one real database.
 */
export function tokenSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`token API on ${label}`, () => {
    let database: TestDatabase;
    let tokenRoute: TokenRoute;
    let refreshRoute: RefreshRoute;
    let meRoute: MeRoute;
    let challengeRoute: ChallengeRoute;
    let gate: Gatehouse;
    const users: Record<string, string> = {};

    beforeAll(async () => {
      announcePeerHeader();
      database = await makeDatabase();
      // Above the failures one test's address causes, so the API's own limits are seen apart from the
      // checks for new devices it shares with the browser (tests/integration/attack-shapes.crowd.suite.ts).
      gate = await servedGatehouse(database.url, { RATE_LIMIT_NEW_DEVICE_CHECKS: "50/15m" });
      tokenRoute = await import("@/app/api/v1/authentication/token/route");
      refreshRoute = await import("@/app/api/v1/authentication/token/refresh/route");
      meRoute = await import("@/app/api/v1/me/route");
      challengeRoute = await import("@/app/api/altcha/challenge/route");
      const { registerAccount } = await import("@/lib/users/accounts");
      for (const name of ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan"]) {
        const created = await registerAccount(gate.prisma, { email: `${name}@example.com`, password: PASSWORD }, gate.hasher, Date.now());
        if (!created.ok) throw new Error(`could not create ${name}`);
        users[name] = created.user.id;
      }
    });

    afterAll(async () => {
      await closeServed(gate);
      await database?.dispose();
    });

    const post = (path: string, body: unknown, address = freshAddress(), contentType = "application/json") => {
      const request = new Request(`http://localhost${path}`, {
        method: "POST",
        headers: { "content-type": contentType, [PEER_HEADER]: address },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      return path === TOKEN_PATH ? tokenRoute.POST(request) : refreshRoute.POST(request);
    };

    /** A fresh solved ALTCHA payload from the real challenge route. */
    async function altcha() {
      const res = await challengeRoute.GET(
        new Request("http://localhost/api/altcha/challenge", { headers: { [PEER_HEADER]: freshAddress() } }),
      );
      return solve(await res.json());
    }

    async function signIn(email: string, password: string, address = freshAddress()) {
      return post(TOKEN_PATH, { email, password, altcha: await altcha() }, address);
    }

    async function tokensFor(email: string): Promise<TokenPair> {
      const res = await signIn(email, PASSWORD);
      expect(res.status).toBe(200);
      return res.json();
    }

    const refresh = (refreshToken: string, address = freshAddress()) => post(REFRESH_PATH, { refresh_token: refreshToken }, address);

    function me(headers: Record<string, string> = {}) {
      return meRoute.GET(new NextRequest("http://localhost/api/v1/me", { headers: { [PEER_HEADER]: freshAddress(), ...headers } }));
    }

    async function lockoutRow(email: string) {
      return gate.prisma.signInLockout.findUnique({ where: { usernameKey: gate.usernameKey(email) } });
    }

    async function familyOf(refreshToken: string) {
      const row = await gate.prisma.refreshToken.findUniqueOrThrow({ where: { tokenHash: sha256Hex(refreshToken) } });
      return gate.prisma.refreshToken.findMany({ where: { familyId: row.familyId }, orderBy: { createdAt: "asc" } });
    }

    describe("POST /api/v1/authentication/token", () => {
      it("issues a 15-minute access token and a 30-day refresh token stored as a digest, for the normalised email", async () => {
        const prisma = gate.prisma;
        const eventsBefore = await prisma.securityEvent.count({ where: { userId: users.alice, kind: "refresh_family_created" } });
        const res = await signIn("  Alice@Example.COM ", PASSWORD);
        expect(res.status).toBe(200);
        expect(res.headers.get("cache-control")).toBe("no-store");
        const body = (await res.json()) as TokenPair;
        expect(body).toEqual({
          access_token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/),
          token_type: "Bearer",
          expires_in: ACCESS_TTL_SECONDS,
          refresh_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
          refresh_expires_in: REFRESH_TTL_SECONDS,
          device_token: expect.stringMatching(/^[\w-]{22}\.\d+\.[\w-]{43}\.[\w-]{22}$/),
        });

        const { verifyAccessToken } = await import("@/lib/tokens/access-token");
        expect(await verifyAccessToken(body.access_token, gate.config.tokens.secret, Date.now())).toEqual({
          ok: true,
          userId: users.alice,
          familyId: expect.any(String),
          credentialGeneration: 0,
        });
        const claims = JSON.parse(Buffer.from(body.access_token.split(".")[1]!, "base64url").toString());
        expect(claims).toEqual({
          sub: users.alice,
          fam: expect.any(String),
          gen: 0,
          iss: "gatehouse",
          aud: "gatehouse-api",
          iat: expect.any(Number),
          exp: claims.iat + ACCESS_TTL_SECONDS,
        });

        const row = await prisma.refreshToken.findUniqueOrThrow({ where: { tokenHash: sha256Hex(body.refresh_token) } });
        expect(row).toMatchObject({ userId: users.alice, rotatedAt: null, revokedAt: null });
        expect(row.expiresAt.getTime() - row.createdAt.getTime()).toBe(REFRESH_TTL_SECONDS * 1000);
        expect(await prisma.securityEvent.count({ where: { userId: users.alice, kind: "refresh_family_created" } })).toBe(eventsBefore + 1);
      });

      it("starts a new refresh family on every sign-in", async () => {
        const first = await tokensFor("alice@example.com");
        const second = await tokensFor("alice@example.com");
        const [a] = await familyOf(first.refresh_token);
        const [b] = await familyOf(second.refresh_token);
        expect(a!.familyId).not.toBe(b!.familyId);
      });

      it("answers a wrong password and an unknown account with the same generic 401, each counted toward the lockout", async () => {
        const wrong = await signIn("bob@example.com", WRONG);
        expect(wrong.status).toBe(401);
        expect(wrong.headers.get("cache-control")).toBe("no-store");
        expect(await wrong.json()).toEqual(INVALID_CREDENTIALS);
        expect((await lockoutRow("bob@example.com"))?.failureCount).toBe(1);

        const unknown = await signIn("nobody@example.com", PASSWORD);
        expect(unknown.status).toBe(401);
        expect(await unknown.json()).toEqual(INVALID_CREDENTIALS);
        expect((await lockoutRow("nobody@example.com"))?.failureCount).toBe(1);
        expect(await gate.prisma.refreshToken.count({ where: { userId: users.bob } })).toBe(0);
      });

      it("shares the browser's username lockout: after 5 failures from different addresses the right password gets 429 locked", async () => {
        for (let i = 1; i <= 5; i++) {
          const res = await signIn("carol@example.com", WRONG);
          expect(res.status).toBe(401);
          expect((await lockoutRow("carol@example.com"))?.failureCount).toBe(i);
        }
        const lockedUntil = (await lockoutRow("carol@example.com"))!.lockedUntil!;
        const before = Date.now();
        const res = await signIn("carol@example.com", PASSWORD);
        const after = Date.now();
        expect(res.status).toBe(429);
        const body = await res.json();
        // No exact end for a client without a known device: the wait is rounded up to the minute.
        expect(body).toEqual({
          error: "locked",
          message:
            "Sign-in to this account is paused after repeated failed attempts. Try again in about a minute, or sign in from a device you have used before.",
          retryAfterSeconds: 60,
        });
        const { max } = secondsUntil(lockedUntil.getTime(), before, after);
        expect(max).toBeLessThanOrEqual(60);
        expect(after - before).toBeLessThan(60_000);
        expect(res.headers.get("Retry-After")).toBe(String(body.retryAfterSeconds));
        expect(await gate.prisma.refreshToken.count({ where: { userId: users.carol } })).toBe(0);

        // The browser sign-in refuses the same account for the same lock.
        const browser = await browserSignIn("carol@example.com", PASSWORD);
        expect(browser.status).toBe(429);
        const browserBody = await browser.json();
        expect(browserBody).toMatchObject({ error: "locked", retryAfterSeconds: 60 });
        expect(browserBody).not.toHaveProperty("lockedUntil");
      });

      it("counts browser failures toward the token endpoint's lockout, and token failures toward the browser's", async () => {
        for (let i = 0; i < 3; i++) expect((await signIn("dave@example.com", WRONG)).status).toBe(401);
        for (let i = 0; i < 2; i++) {
          const browser = await browserSignIn("dave@example.com", WRONG);
          // A username under attack answers any password from a new device alike: a code may have
          // been mailed (it was not: the password is wrong), and no session.
          expect(browser.status).toBe(401);
          expect(await browser.json()).toMatchObject({ error: "device_confirmation_required" });
          expect(sessionCookieOf(browser)).toBeNull();
        }
        expect((await lockoutRow("dave@example.com"))?.failureCount).toBe(5);
        const res = await signIn("dave@example.com", PASSWORD);
        expect(res.status).toBe(429);
        expect(await res.json()).toMatchObject({ error: "locked" });
      });

      it("requires an ALTCHA solution: missing → 400 captcha_invalid, nothing counted or issued", async () => {
        const res = await post(TOKEN_PATH, { email: "erin@example.com", password: PASSWORD });
        expect(res.status).toBe(400);
        expect(await res.json()).toEqual({
          error: "captcha_invalid",
          message: "The automatic robot check did not run. Try again.",
          reason: "missing",
        });
        expect(await lockoutRow("erin@example.com")).toBeNull();
        expect(await gate.prisma.refreshToken.count({ where: { userId: users.erin } })).toBe(0);
      });

      it.each([
        ["malformed JSON", "{not json", "application/json", 400, "invalid_json"],
        ["a form body", "email=a&password=b", "application/x-www-form-urlencoded", 415, "unsupported_media_type"],
        ["missing fields", "{}", "application/json", 400, "invalid_input"],
        [
          "a 1 MB body",
          JSON.stringify({ email: "a@example.com", password: "x".repeat(1024 * 1024) }),
          "application/json",
          413,
          "payload_too_large",
        ],
      ])("refuses %s with a JSON error", async (_name, body, type, status, error) => {
        const res = await post(TOKEN_PATH, body, freshAddress(), type);
        expect(res.status).toBe(status);
        expect(await res.json()).toMatchObject({ error });
      });

      it("limits token requests per address and path (sliding window, 10 per minute); the refresh path keeps its own counter", async () => {
        // Keep all eleven requests inside one aligned minute, so the expected wait is exact.
        const intoMinuteMs = Date.now() % 60_000;
        if (intoMinuteMs > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinuteMs + 10));
        const windowStartMs = Math.floor(Date.now() / 60_000) * 60_000;
        const address = freshAddress();
        const statuses: number[] = [];
        // Invalid bodies still spend the allowance: this limit runs before the body is read.
        for (let i = 0; i < 10; i++) statuses.push((await post(TOKEN_PATH, "{}", address)).status);
        expect(statuses).toEqual(Array(10).fill(400));

        const before = Date.now();
        const refused = await post(TOKEN_PATH, "{}", address);
        const after = Date.now();
        expect(Math.floor(after / 60_000) * 60_000).toBe(windowStartMs);
        expect(refused.status).toBe(429);
        const body = await refused.json();
        expect(body).toEqual({
          error: "rate_limited",
          message: "Too many attempts from your network. Wait before trying again.",
          retryAfterSeconds: expect.any(Number),
        });
        expect(refused.headers.get("Retry-After")).toBe(String(body.retryAfterSeconds));
        // API clients get the IETF rate-limit fields too: a sliding window of 10 per 60 s.
        expect(refused.headers.get("RateLimit-Policy")).toBe('"apiToken";q=10;w=60');
        expect(refused.headers.get("RateLimit")).toBe(`"apiToken";r=0;t=${body.retryAfterSeconds}`);
        // Ten in the current window: allowed again once 9 / 10 of it has slid out, 6 s into the next one.
        const { min, max } = secondsUntil(windowStartMs + 66_000, before, after);
        expect(body.retryAfterSeconds).toBeGreaterThanOrEqual(min);
        expect(body.retryAfterSeconds).toBeLessThanOrEqual(max);

        // Another address is unaffected; the refresh path from this address has its own ten.
        expect((await post(TOKEN_PATH, "{}", freshAddress())).status).toBe(400);
        for (let i = 0; i < 10; i++) {
          const res = await refresh(randomBytes(32).toString("base64url"), address);
          expect(res.status).toBe(401);
          expect(await res.json()).toEqual(REFRESH_UNKNOWN);
        }
        const refreshRefused = await refresh(randomBytes(32).toString("base64url"), address);
        expect(refreshRefused.status).toBe(429);
        expect(await refreshRefused.json()).toMatchObject({ error: "rate_limited" });
      });
    });

    describe("GET /api/v1/me", () => {
      it("answers the caller's account for a valid access token", async () => {
        const pair = await tokensFor("frank@example.com");
        const res = await me({ authorization: `Bearer ${pair.access_token}` });
        expect(res.status).toBe(200);
        expect(res.headers.get("cache-control")).toBe("no-store");
        const user = await gate.prisma.user.findUniqueOrThrow({ where: { id: users.frank } });
        expect(await res.json()).toEqual({ id: users.frank, email: "frank@example.com", createdAt: user.createdAt.toISOString() });
      });

      it("answers for a browser session cookie, but never falls back to it when a Bearer token is bad", async () => {
        const { encode } = await import("next-auth/jwt");
        // A session as sign-in makes one: its server record, and its id in the JWT.
        const record = await gate.sessions.create({
          userId: users.frank!,
          credentialGeneration: 0,
          browser: "Firefox",
          address: "198.51.100.x",
          nowMs: Date.now(),
          expiresAtMs: Date.now() + 3_600_000,
        });
        const session = await encode({
          token: { sub: users.frank, email: "frank@example.com", sid: record.id },
          secret: gate.config.session.secret,
        });
        const cookie = `next-auth.session-token=${session}`;
        const res = await me({ cookie });
        expect(res.status).toBe(200);
        expect(await res.json()).toMatchObject({ id: users.frank, email: "frank@example.com" });

        const bad = await me({ cookie, authorization: "Bearer not.a.token" });
        expect(bad.status).toBe(401);
        expect(await bad.json()).toEqual(ACCESS_INVALID);

        const none = await me();
        expect(none.status).toBe(401);
        expect(await none.json()).toEqual({ error: "unauthenticated", message: "Sign in or send a Bearer access token." });
      });

      it("refuses a token signed with another secret", async () => {
        const forged = await apiTokenFor(gate, users.frank!, {
          secret: "an-attacker-chosen-secret-of-32-characters!",
          ttlSeconds: ACCESS_TTL_SECONDS,
        });
        const res = await me({ authorization: `Bearer ${forged}` });
        expect(res.status).toBe(401);
        expect(res.headers.get("WWW-Authenticate")).toBe('Bearer error="invalid_token", error_description="invalid"');
        expect(await res.json()).toEqual(ACCESS_INVALID);
      });

      it("refuses an expired token, saying so", async () => {
        const expired = await apiTokenFor(gate, users.frank!, { nowMs: Date.now() - 3_600_000, ttlSeconds: ACCESS_TTL_SECONDS });
        const res = await me({ authorization: `Bearer ${expired}` });
        expect(res.status).toBe(401);
        expect(res.headers.get("WWW-Authenticate")).toBe('Bearer error="invalid_token", error_description="expired"');
        expect(await res.json()).toEqual(ACCESS_EXPIRED);
      });

      it("refuses an unsigned alg: none token carrying valid claims", async () => {
        const nowSeconds = Math.floor(Date.now() / 1000);
        const claims = { sub: users.frank, iss: "gatehouse", aud: "gatehouse-api", iat: nowSeconds, exp: nowSeconds + 600 };
        const unsigned = `${base64url({ alg: "none", typ: "JWT" })}.${base64url(claims)}.`;
        const res = await me({ authorization: `Bearer ${unsigned}` });
        expect(res.status).toBe(401);
        expect(await res.json()).toEqual(ACCESS_INVALID);
      });

      it.each([
        ["a scheme without a token", "Bearer"],
        ["a token with a space", "Bearer abc def"],
        ["another scheme", "Basic ZnJhbms6cGFzc3dvcmQ="],
        ["random characters", "Bearer abc.def.ghi"],
        ["a 5,000-character token", `Bearer ${"a".repeat(5_000)}`],
      ])("refuses a malformed Authorization header: %s", async (_name, authorization) => {
        const res = await me({ authorization });
        expect(res.status).toBe(401);
        expect(await res.json()).toEqual(ACCESS_INVALID);
      });
    });

    describe("POST /api/v1/authentication/token/refresh", () => {
      it("rotates: a new pair of the same family, and the old refresh token then fails", async () => {
        const first = await tokensFor("grace@example.com");
        const res = await refresh(first.refresh_token);
        expect(res.status).toBe(200);
        expect(res.headers.get("cache-control")).toBe("no-store");
        const second = (await res.json()) as TokenPair;
        expect(second).toEqual({
          access_token: expect.any(String),
          token_type: "Bearer",
          expires_in: ACCESS_TTL_SECONDS,
          refresh_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
          refresh_expires_in: REFRESH_TTL_SECONDS,
        });
        expect(second.refresh_token).not.toBe(first.refresh_token);
        expect((await me({ authorization: `Bearer ${second.access_token}` })).status).toBe(200);
        const family = await familyOf(second.refresh_token);
        expect(family.map((row) => row.tokenHash)).toEqual([sha256Hex(first.refresh_token), sha256Hex(second.refresh_token)]);
        expect(family[0]!.rotatedAt).not.toBeNull();

        const again = await refresh(first.refresh_token);
        expect(again.status).toBe(401);
        expect(await again.json()).toEqual(REFRESH_REUSED);
      });

      it("on a replayed rotated token, answers 401 and revokes the whole family, newest token included", async () => {
        const first = await tokensFor("grace@example.com");
        const second = (await (await refresh(first.refresh_token)).json()) as TokenPair;
        const third = (await (await refresh(second.refresh_token)).json()) as TokenPair;
        const other = await tokensFor("grace@example.com");

        const replay = await refresh(first.refresh_token);
        expect(replay.status).toBe(401);
        expect(await replay.json()).toEqual(REFRESH_REUSED);
        const family = await familyOf(third.refresh_token);
        expect(family).toHaveLength(3);
        expect(family.every((row) => row.revokedAt !== null)).toBe(true);

        const newest = await refresh(third.refresh_token);
        expect(newest.status).toBe(401);
        expect(await newest.json()).toEqual(REFRESH_REVOKED);
        // Another sign-in of the same user is another family, untouched.
        expect((await refresh(other.refresh_token)).status).toBe(200);
      });

      it("lets one of two concurrent refreshes with one token win, then the family is revoked", async () => {
        const pair = await tokensFor("heidi@example.com");
        const results = await Promise.all([refresh(pair.refresh_token), refresh(pair.refresh_token)]);
        expect(results.map((res) => res.status).sort()).toEqual([200, 401]);
        const winner = results.find((res) => res.status === 200)!;
        const loser = results.find((res) => res.status === 401)!;
        expect(await loser.json()).toEqual(REFRESH_REUSED);
        const won = (await winner.json()) as TokenPair;

        const family = await familyOf(pair.refresh_token);
        expect(family).toHaveLength(2);
        expect(family.every((row) => row.revokedAt !== null)).toBe(true);
        const late = await refresh(won.refresh_token);
        expect(late.status).toBe(401);
        expect(await late.json()).toEqual(REFRESH_REVOKED);
      });

      it("refuses an expired, an unknown and a malformed refresh token with 401 invalid_token", async () => {
        const { issueRefreshToken } = await import("@/lib/tokens/refresh-tokens");
        const old = await issueRefreshToken(
          gate.prisma,
          users.heidi!,
          null,
          REFRESH_TTL_SECONDS * 1000,
          Date.now() - (REFRESH_TTL_SECONDS + 60) * 1000,
        );
        const expired = await refresh(old.token);
        expect(expired.status).toBe(401);
        expect(await expired.json()).toEqual(REFRESH_EXPIRED);

        for (const token of [randomBytes(32).toString("base64url"), "not a refresh token", "x".repeat(512)]) {
          const res = await refresh(token);
          expect(res.status).toBe(401);
          expect(await res.json()).toEqual(REFRESH_UNKNOWN);
        }
      });

      it.each([
        ["a missing refresh_token", {}],
        ["a non-string refresh_token", { refresh_token: 42 }],
        ["an empty refresh_token", { refresh_token: "" }],
        ["a 513-character refresh_token", { refresh_token: "x".repeat(513) }],
      ])("refuses %s as 400 invalid_input", async (_name, body) => {
        const res = await post(REFRESH_PATH, body);
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ error: "invalid_input", fields: { refresh_token: expect.any(String) } });
      });

      it("closes the session of a deleted account: /me and refresh answer 401, the family is deleted with the account", async () => {
        const pair = await tokensFor("ivan@example.com");
        const prisma = gate.prisma;
        await prisma.user.delete({ where: { id: users.ivan } });

        const res = await me({ authorization: `Bearer ${pair.access_token}` });
        expect(res.status).toBe(401);
        expect(await res.json()).toEqual({ error: "invalid_token", message: "The account for this access token no longer exists." });

        const refused = await refresh(pair.refresh_token);
        expect(refused.status).toBe(401);
        expect(await refused.json()).toEqual(REFRESH_UNKNOWN);
        expect(await prisma.refreshToken.count({ where: { userId: users.ivan } })).toBe(0);
      });
    });

    it("stores refresh tokens only as SHA-256 digests: no row holds a raw token", async () => {
      const first = await tokensFor("alice@example.com");
      const second = (await (await refresh(first.refresh_token)).json()) as TokenPair;
      const prisma = gate.prisma;
      const rows = await prisma.$queryRawUnsafe<Record<string, unknown>[]>(`SELECT * FROM "RefreshToken"`);
      const dump = JSON.stringify(rows);
      for (const raw of [first.refresh_token, second.refresh_token]) {
        expect(dump).not.toContain(raw);
        expect(dump).not.toContain(Buffer.from(raw, "base64url").toString("hex"));
      }
      const hashes = rows.map((row) => row.tokenHash);
      expect(hashes.every((hash) => typeof hash === "string" && /^[0-9a-f]{64}$/.test(hash))).toBe(true);
      expect(hashes).toEqual(expect.arrayContaining([sha256Hex(first.refresh_token), sha256Hex(second.refresh_token)]));
      const events = JSON.stringify(await prisma.$queryRawUnsafe(`SELECT * FROM "SecurityEvent"`));
      expect(events).not.toContain(first.refresh_token);
    });
  });
}

onEachDatabase("token API", ({ label, makeDatabase }) => tokenSuite(label, makeDatabase));

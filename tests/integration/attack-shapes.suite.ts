import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { NextRequest } from "next/server";
import {
  altchaPayload,
  browserSignIn,
  comparableAnswer,
  cookiesOf,
  browserSignOut,
  createAccount,
  sessionCookieOf,
  sessionWith,
  signedInBrowser,
  tokenSignIn,
} from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, serveAgain, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";
import { watchPasswordChecks } from "../helpers/verifications";
import { codeShapes } from "./attack-shapes.codes";
import { hardeningShapes } from "./attack-shapes.hardening";
import { ownerShapes } from "./attack-shapes.owner";
import { onEachDatabase } from "../helpers/each-database";
import { reviewShapes } from "./attack-shapes.review";
import { accountShapes } from "./attack-shapes.account";
import { rememberShapes } from "./attack-shapes.remember";
import { emailChangeShapes } from "./attack-shapes.email";
import { csrfShapes } from "./attack-shapes.csrf";
import { noticeShapes } from "./attack-shapes.notice";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the right passphrase";

/**
 * Request shapes an attacker tries against the password check, through the real route handlers
 * and a real database. Each ends with no session, no Argon2id call beyond the policy, and a 4xx.
 * (Shapes that only Next.js's router can produce, such as extra path segments or an encoded
 * slash, are in e2e/attack-shapes.spec.ts against the production server.)
 */
export function attackShapeSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`attack shapes on ${label}`, () => {
    let database: TestDatabase;
    let gate: Gate;
    let checks: Awaited<ReturnType<typeof watchPasswordChecks>>;
    const signInRoute = () => import("@/app/api/auth/callback/credentials/route");

    const register = (email: string) => createAccount(gate, email, PASSWORD);

    /** Locks `email` the way an attacker would: five wrong passwords through the token endpoint. */
    async function lock(email: string) {
      for (let i = 0; i < 5; i++) await tokenSignIn(email, "wrong guess");
      expect((await gate.lockouts.check(gate.usernameKey(email), Date.now(), gate.config.lockout)).locked).toBe(true);
    }

    async function failureCount(email: string) {
      return (await gate.prisma.signInLockout.findUnique({ where: { usernameKey: gate.usernameKey(email) } }))?.failureCount ?? 0;
    }

    beforeAll(async () => {
      announcePeerHeader();
      database = await makeDatabase();
      // The checks for new devices above what one test's address fails, so each shape meets the layer it
      // is about (the lock, the fingerprints); attack-shapes.crowd.suite.ts holds them at their default.
      gate = await servedGatehouse(database.url, { HASH_QUEUE: "100", RATE_LIMIT_NEW_DEVICE_CHECKS: "50/15m" });
      for (const name of ["victim", "parallel", "tokenparallel", "owner", "redirect", "query", "normal", "session"])
        await register(`${name}@example.com`);
      await lock("victim@example.com");
      checks = await watchPasswordChecks(gate);
    });

    afterAll(async () => {
      await closeServed(gate);
      await database?.dispose();
    });

    beforeEach(() => checks.reset());

    describe("next-auth is not a way in", () => {
      it("has no provider: its own credentials callback verifies nothing, counts nothing and starts no session", async () => {
        const { authOptions } = await import("@/lib/auth/next-auth/options");
        const { callNextAuth } = await import("@/lib/auth/next-auth/call");
        expect(authOptions(gate).providers).toEqual([]);
        const before = await failureCount("owner@example.com");
        // next-auth's own CSRF pair, from its csrf action forced too (no route hands it out any
        // more), so its callback gets past its own check to where a provider would be.
        const pair = await callNextAuth(gate, new NextRequest("http://localhost/api/auth/csrf"), ["csrf"] as never);
        const { csrfToken } = (await pair.json()) as { csrfToken: string };
        const cookie = cookiesOf(pair);
        const request = new NextRequest("http://localhost/api/auth/callback/credentials", {
          method: "POST",
          headers: { cookie, "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
        });
        // The action the route table never hands to next-auth, forced through its handler.
        const res = await callNextAuth(gate, request, ["callback", "credentials"] as never, {
          csrfToken,
          email: "owner@example.com",
          password: PASSWORD,
        });
        expect(sessionCookieOf(res)).toBeNull();
        expect(checks.verified()).toBe(0);
        expect(await failureCount("owner@example.com")).toBe(before);
      });

      it("reaches Argon2id for a sign-in only through the password corridor", async () => {
        // The password check is private to lib/auth/sign-in.ts, whose one entry runs every cheap
        // layer first (docs/decisions/0022): no other module can import a way around them.
        const corridor = await import("@/lib/auth/sign-in");
        expect(Object.keys(corridor).sort()).toEqual(["countWrongCode", "signInWithPassword"]);
        const { readdirSync, readFileSync, statSync } = await import("node:fs");
        const path = await import("node:path");
        const sources = (dir: string): string[] =>
          readdirSync(dir).flatMap((name) => {
            const file = path.join(dir, name);
            if (file === path.join("lib", "generated")) return [];
            if (statSync(file).isDirectory()) return sources(file);
            return /\.(ts|tsx|mjs)$/.test(name) && !/\.test\.ts$/.test(name) ? [file] : [];
          });
        const callers = [...sources("lib"), ...sources("app")].filter((file) =>
          /\bverifyCredentials\b|hasher\.verify\(/.test(readFileSync(file, "utf8")),
        );
        expect(callers.sort()).toEqual(["lib/auth/sign-in.ts", "lib/users/accounts.ts"]);
      });
    });

    describe("the right password for a locked account", () => {
      it("gets 429 locked and no session from the browser sign-in, with no verification", async () => {
        const res = await browserSignIn("victim@example.com", PASSWORD);
        expect(res.status).toBe(429);
        expect(await res.json()).toMatchObject({ error: "locked" });
        expect(sessionCookieOf(res)).toBeNull();
        expect(checks.verified()).toBe(0);
      });

      it("gets 429 locked and no tokens from the token endpoint, with no verification", async () => {
        const res = await tokenSignIn("victim@example.com", PASSWORD);
        expect(res.status).toBe(429);
        expect(await res.json()).toMatchObject({ error: "locked" });
        expect(checks.verified()).toBe(0);
      });

      it("gets a 404 from every next-auth action the app does not use", async () => {
        const { GET, POST } = await import("@/app/api/auth/[...rest]/route");
        const body = new URLSearchParams({ email: "victim@example.com", password: PASSWORD, json: "true" }).toString();
        for (const rest of [
          ["csrf"],
          ["callback", "credentials", "x"],
          ["signin", "credentials"],
          ["_log"],
          ["providers"],
          ["callback/credentials"],
          ["CALLBACK", "credentials"],
        ]) {
          const url = `http://localhost/api/auth/${rest.join("/")}`;
          const headers = {
            "content-type": "application/x-www-form-urlencoded",
            "sec-fetch-site": "same-origin",
            [PEER_HEADER]: freshAddress(),
          };
          const posted = await POST(new Request(url, { method: "POST", headers, body }), { params: Promise.resolve({ rest }) });
          expect(posted.status, url).toBe(404);
          expect(await posted.json()).toEqual({ error: "not_found", message: "No such endpoint." });
          expect(sessionCookieOf(posted)).toBeNull();
          expect((await GET(new Request(url, { headers }), { params: Promise.resolve({ rest }) })).status).toBe(404);
        }
        expect(checks.verified()).toBe(0);
      });
    });

    describe("one parse: the body means one thing to every layer", () => {
      const ambiguous = [
        "application/json; x=application/x-www-form-urlencoded",
        "application/x-www-form-urlencoded; x=application/json",
        "application/x-www-form-urlencoded, application/json",
        "application/json, application/x-www-form-urlencoded",
        "application/x-www-form-urlencoded; charset=latin1",
        "application/x-www-form-urlencodedx",
        "text/plain; application/x-www-form-urlencoded",
        "multipart/form-data; boundary=----x",
        "application/json",
        "",
      ];

      it.each(ambiguous)("refuses Content-Type %j with 415, before any layer reads the body", async (contentType) => {
        const form = new URLSearchParams({ email: "decoy@example.com", password: "x", csrfToken: "t", altcha: "a", json: "true" });
        const res = await browserSignIn("victim@example.com", PASSWORD, {
          contentType,
          body: `${form}&${JSON.stringify({ email: "victim@example.com", password: PASSWORD })}`,
        });
        expect(res.status).toBe(415);
        expect(await res.json()).toMatchObject({ error: "unsupported_media_type" });
        expect(sessionCookieOf(res)).toBeNull();
        expect(checks.verified()).toBe(0);
      });

      it("takes a urlencoded body with a UTF-8 charset or another case as the same form", async () => {
        for (const contentType of ["application/x-www-form-urlencoded; charset=UTF-8", "Application/X-WWW-Form-Urlencoded"]) {
          const res = await browserSignIn("victim@example.com", PASSWORD, { contentType });
          expect(res.status, contentType).toBe(429); // read as the form it is: the victim, who is locked
          expect(await res.json()).toMatchObject({ error: "locked" });
        }
        expect(checks.verified()).toBe(0);
      });

      it.each([
        ["email", (f: URLSearchParams) => f.append("email", "victim@example.com")],
        ["password", (f: URLSearchParams) => f.append("password", PASSWORD)],
        ["callbackUrl", (f: URLSearchParams) => f.append("callbackUrl", "/account")],
      ])("refuses a form with %s twice (400), counting nothing", async (_field, duplicate) => {
        const form = new URLSearchParams({
          callbackUrl: "/",
          email: "decoy@example.com",
          password: "a decoy password",
          altcha: await altchaPayload(),
          json: "true",
        });
        duplicate(form);
        const address = freshAddress();
        const request = new Request("http://localhost/api/auth/callback/credentials", {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin", [PEER_HEADER]: address },
          body: form.toString(),
        });
        const res = await (await signInRoute()).POST(request);
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ error: "invalid_input" });
        expect(checks.verified()).toBe(0);
        expect(await failureCount("decoy@example.com")).toBe(0);
      });

      it("ignores fields in the query string: the body's username is the one checked, counted and signed in", async () => {
        const url = `http://localhost/api/auth/callback/credentials?${new URLSearchParams({ email: "victim@example.com", password: PASSWORD, callbackUrl: "https://evil.example/" })}`;
        // The right password first: after a wrong one, a new device would wait for a mailed code.
        const right = await browserSignIn("query@example.com", PASSWORD, { url });
        expect(right.status).toBe(200);
        expect(sessionCookieOf(right)).not.toBeNull();
        expect(new URL((await right.json()).url).origin).toBe("http://localhost:3000");

        const res = await browserSignIn("query@example.com", "a wrong password", { url });
        expect(res.status).toBe(401);
        expect(sessionCookieOf(res)).toBeNull();
        expect(checks.verified()).toBe(2);
        expect(await failureCount("query@example.com")).toBe(1);
        expect(await failureCount("victim@example.com")).toBe(5);
      });

      it("hands next-auth the normalised username the gate checked, not the raw field", async () => {
        const res = await browserSignIn("  NORMAL@Example.COM ", PASSWORD);
        expect(res.status).toBe(200);
        expect(sessionCookieOf(res)).not.toBeNull();
        expect(checks.verified()).toBe(1);
      });
    });

    describe("next-auth's own answers are not mistaken for success", () => {
      it("answers a post from another site with 403 csrf_invalid, counting and verifying nothing", async () => {
        const res = await browserSignIn("owner@example.com", PASSWORD, { headers: { "sec-fetch-site": "cross-site" } });
        expect(res.status).toBe(403);
        expect(await res.json()).toEqual({ error: "csrf_invalid", message: "This page has expired. Reload it and try again." });
        expect(sessionCookieOf(res)).toBeNull();
        expect(checks.verified()).toBe(0);
      });

      it("refuses an email with a NUL or another control character as input (400), never an error in a URL", async () => {
        for (const email of ["owner\u0000@example.com", "owner@example.com\u0007"]) {
          const res = await browserSignIn(email, PASSWORD);
          expect(res.status).toBe(400);
          expect(await res.json()).toMatchObject({ error: "invalid_input", fields: { email: "Enter a valid email address." } });
          expect((await tokenSignIn(email, PASSWORD)).status).toBe(400);
        }
        expect(checks.verified()).toBe(0);
      });
    });

    describe("parallel wrong passwords from many addresses", () => {
      it("reach Argon2id at most LOCKOUT_THRESHOLD times through the browser sign-in", async () => {
        const results = await Promise.all(Array.from({ length: 12 }, () => browserSignIn("parallel@example.com", "wrong guess")));
        expect(results.filter((res) => res.status === 401)).toHaveLength(5);
        expect(results.filter((res) => res.status === 429)).toHaveLength(7);
        expect(results.some((res) => sessionCookieOf(res) !== null)).toBe(false);
        expect(checks.verified()).toBe(5);
        expect(await failureCount("parallel@example.com")).toBe(5);
      });

      it("reach Argon2id at most LOCKOUT_THRESHOLD times through the token endpoint", async () => {
        const results = await Promise.all(Array.from({ length: 12 }, () => tokenSignIn("tokenparallel@example.com", "wrong guess")));
        expect(results.map((res) => res.status).sort()).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
        expect(checks.verified()).toBe(5);
      });
    });

    describe("the door's hold for an owner's password check (docs/decisions/0016)", () => {
      it("is not the attacker's to take: a known device past its lane's allowance is checked as a stranger, holding nobody", async () => {
        await register("laneholder@example.com");
        // The lane of each check, read while its Argon2id runs: the door holds strangers for "trusted" only.
        const lanes: string[] = [];
        const inner = gate.hasher;
        gate.hasher = {
          ...inner,
          verify: (storedHash, password) => {
            lanes.push(gate.hashBudget.trustedExecuting > 0 ? "trusted" : "untrusted");
            return inner.verify(storedHash, password);
          },
        };
        try {
          const deviceOf = (res: Response) =>
            res.headers
              .getSetCookie()
              .find((cookie) => /gatehouse-device=/.test(cookie))!
              .split(";")[0]!;
          let device = deviceOf(await browserSignIn("laneholder@example.com", PASSWORD));
          // An attacker with an account of their own signs in from their known device again and again
          // (RATE_LIMIT_KNOWN_DEVICE_LANE's default: 10 an hour per username).
          for (let i = 0; i < 11; i++) {
            const res = await browserSignIn("laneholder@example.com", PASSWORD, { cookie: device });
            expect(res.status).toBe(200);
            device = deviceOf(res);
          }
          expect(lanes).toEqual(["untrusted", ...Array(10).fill("trusted"), "untrusted"]);
        } finally {
          gate.hasher = inner;
        }
      });
    });

    describe("redirects after sign-in stay on the origin", () => {
      it.each([
        "/\t/evil.example",
        "/\r\n/evil.example",
        "//evil.example",
        "/\\evil.example",
        "https://evil.example/",
        "/%09/evil.example",
        "/%5C%5Cevil.example",
      ])("sends %j home instead", async (callbackUrl) => {
        const res = await browserSignIn("redirect@example.com", PASSWORD, { fields: { callbackUrl } });
        expect(res.status).toBe(200);
        const { url } = (await res.json()) as { url: string };
        expect(new URL(url).origin).toBe("http://localhost:3000");
        expect(new URL(url).pathname).toBe("/");
      });
    });

    describe("session cookies that name no live session (invariant 3)", () => {
      /** A cookie next-auth would accept as a JWT: signed and encrypted with the app's own secret. */
      async function forgedCookie(claims: Record<string, unknown>): Promise<string> {
        const { encode } = await import("next-auth/jwt");
        return `next-auth.session-token=${await encode({ token: claims, secret: gate.config.session.secret })}`;
      }

      const api = async (cookie: string) => [
        await (
          await import("@/app/api/v1/me/route")
        ).GET(new NextRequest("http://localhost/api/v1/me", { headers: { cookie, [PEER_HEADER]: freshAddress() } })),
        await (
          await import("@/app/api/v1/reports/route")
        ).POST(
          new NextRequest("http://localhost/api/v1/reports", {
            method: "POST",
            headers: { cookie, "content-type": "application/json", "sec-fetch-site": "same-origin", [PEER_HEADER]: freshAddress() },
            body: "{}",
          }),
        ),
      ];

      async function expectRefused(cookie: string) {
        const session = await sessionWith(cookie);
        expect(session).toMatchObject({ status: 200, body: {}, cleared: true });
        for (const res of await api(cookie)) {
          expect(res.status).toBe(401);
          expect(await res.json()).toMatchObject({ error: "unauthenticated" });
        }
      }

      it("refuses a JWT with a forged sid (well-formed, random, malformed, another user's)", async () => {
        const userId = (await gate.prisma.user.findUniqueOrThrow({ where: { email: "session@example.com" } })).id;
        const others = await signedInBrowser("owner@example.com", PASSWORD);
        const ownerSid = (await gate.prisma.browserSession.findFirstOrThrow({ orderBy: { createdAt: "desc" } })).id;
        for (const sid of ["A".repeat(22), "x", "' OR 1=1 --", ownerSid, 42, null]) {
          await expectRefused(await forgedCookie({ sub: userId, email: "session@example.com", sid }));
        }
        // The owner's own cookie still works: only the forgery naming it was refused.
        expect((await sessionWith(others)).body).toMatchObject({ user: { email: "owner@example.com" } });
      });

      it("refuses a JWT without a sid (a cookie minted before server sessions, or by a leaked secret)", async () => {
        const userId = (await gate.prisma.user.findUniqueOrThrow({ where: { email: "session@example.com" } })).id;
        await expectRefused(await forgedCookie({ sub: userId, email: "session@example.com" }));
      });

      it("refuses a signed-out session's cookie replayed", async () => {
        const cookie = await signedInBrowser("session@example.com", PASSWORD);
        expect((await browserSignOut(cookie)).status).toBe(200);
        await expectRefused(cookie);
        await expectRefused(cookie);
      });

      it("refuses a session cookie that is not a JWT at all", async () => {
        await expectRefused("next-auth.session-token=not-a-jwt");
        await expectRefused(`next-auth.session-token=${"a".repeat(3000)}`);
      });
    });

    hardeningShapes(() => ({ gate, checks }), makeDatabase);
    ownerShapes(() => ({ gate }), makeDatabase);

    codeShapes(() => ({ gate }), makeDatabase);
    reviewShapes(() => ({ gate }));

    accountShapes(() => ({ gate }));
    rememberShapes(() => ({ gate }));
    emailChangeShapes(() => ({ gate }));
    csrfShapes(() => ({ gate, checks }));
    noticeShapes(() => ({ gate }));

    describe("'email me a link' routes (a new confirmation link, a new unlock link) tell nobody anything", () => {
      const LINK_ROUTES = {
        "/api/email/verification": () => import("@/app/api/email/verification/route"),
        "/api/unlock/request": () => import("@/app/api/unlock/request/route"),
      } as const;
      const paths = Object.keys(LINK_ROUTES) as (keyof typeof LINK_ROUTES)[];

      function ask(path: keyof typeof LINK_ROUTES, body: string, contentType = "application/json", address = freshAddress()) {
        const request = new NextRequest(`http://localhost${path}`, {
          method: "POST",
          headers: { "content-type": contentType, [PEER_HEADER]: address },
          body,
        });
        return LINK_ROUTES[path]().then((route) => route.POST(request));
      }

      /** Status, body and the headers a client could tell apart (Date aside). */
      async function answerOf(res: Response) {
        const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== "date"));
        return { status: res.status, headers, body: await res.text() };
      }

      beforeAll(async () => {
        await register("unconfirmed@example.com");
        await gate.prisma.user.update({ where: { email: "unconfirmed@example.com" }, data: { emailVerifiedAt: null } });
      });

      it.each(paths)(
        "%s: an unknown, a confirmed, an unconfirmed and a locked account get the same status, headers and body",
        async (path) => {
          const answers = [];
          for (const email of ["nobody-asks@example.com", "owner@example.com", "unconfirmed@example.com", "victim@example.com"]) {
            answers.push(await answerOf(await ask(path, JSON.stringify({ email, altcha: await altchaPayload() }))));
          }
          expect(answers[0]!.status).toBe(202);
          expect(JSON.parse(answers[0]!.body)).toMatchObject({ status: "check_email", message: expect.any(String) });
          for (const answer of answers.slice(1)) expect(answer).toEqual(answers[0]);
          await gate.background.idle();
          expect(checks.verified()).toBe(0);
        },
      );

      it.each(paths)("%s: answers before the account is looked up, so its timing cannot depend on it", async (path) => {
        const deferred: (() => Promise<void>)[] = [];
        const run = gate.background.run.bind(gate.background);
        gate.background.run = (_label, work) => void deferred.push(work);
        try {
          const res = await ask(path, JSON.stringify({ email: "victim@example.com", altcha: await altchaPayload() }));
          expect(res.status).toBe(202);
          // The answer is out; the lookup, the link and the email are still waiting to start.
          expect(deferred).toHaveLength(1);
        } finally {
          gate.background.run = run;
        }
        await deferred[0]!();
      });

      it.each(paths)("%s: refuses a body that is not exactly JSON with 415, before reading it", async (path) => {
        const body = JSON.stringify({ email: "victim@example.com", altcha: "x" });
        for (const contentType of [
          "text/plain",
          "application/x-www-form-urlencoded",
          "application/json; x=y",
          "application/json, text/plain",
          "",
        ]) {
          const res = await ask(path, body, contentType);
          expect(res.status, contentType).toBe(415);
          expect(await res.json()).toMatchObject({ error: "unsupported_media_type" });
        }
      });

      it.each(paths)("%s: bad input is a 400 naming the problem, never a 500", async (path) => {
        for (const body of [
          "",
          "{",
          "null",
          "[]",
          '"victim@example.com"',
          "{}",
          '{"email":"","altcha":"x"}',
          '{"altcha":"x"}',
          '{"email":{"$ne":""},"altcha":"x"}',
        ]) {
          const res = await ask(path, body);
          expect(res.status, body).toBe(400);
          expect((await res.json()).error, body).toMatch(/^(invalid_json|invalid_input)$/);
        }
        const huge = await ask(path, JSON.stringify({ email: "victim@example.com", altcha: "x".repeat(20_000) }));
        expect(huge.status).toBe(413);
      });

      it.each(paths)("%s: without a solved proof of work, 400 captcha_invalid, alike for every address", async (path) => {
        const answers = [];
        for (const email of ["nobody-asks@example.com", "victim@example.com"]) {
          for (const altcha of ["", "not a payload"]) answers.push(await answerOf(await ask(path, JSON.stringify({ email, altcha }))));
        }
        expect(answers[0]!.status).toBe(400);
        expect(JSON.parse(answers[0]!.body)).toMatchObject({ error: "captcha_invalid" });
        expect(answers[2]).toEqual(answers[0]);
        expect(answers[3]).toEqual(answers[1]);
      });

      it.each(paths)("%s: a solution is spent once: replaying it is refused", async (path) => {
        const altcha = await altchaPayload();
        expect((await ask(path, JSON.stringify({ email: "victim@example.com", altcha }))).status).toBe(202);
        const replay = await ask(path, JSON.stringify({ email: "owner@example.com", altcha }));
        expect(replay.status).toBe(400);
        expect(await replay.json()).toMatchObject({ error: "captcha_invalid" });
      });

      it.each(paths)("%s: an email key sent twice is read once, the last one, by every layer", async (path) => {
        const address = freshAddress();
        const body = `{"email":"victim@example.com","email":"duplicate-key@example.com","altcha":${JSON.stringify(await altchaPayload())}}`;
        expect((await ask(path, body, "application/json", address)).status).toBe(202);
        // The per-address-and-username bucket was charged for the last email only (3 per hour: 2 left).
        const remaining = async (email: string) => (await gate.limiter.consume("passwordForgotUsername", [address, email])).remaining;
        expect(await remaining("duplicate-key@example.com")).toBe(1);
        expect(await remaining("victim@example.com")).toBe(2);
      });
    });

    // The unlock and reset pages name the link's account before the button is pressed.
    describe.each([
      { path: "/api/unlock/preview", purpose: "unlock", other: "reset_password", load: () => import("@/app/api/unlock/preview/route") },
      {
        path: "/api/password/reset/preview",
        purpose: "reset_password",
        other: "unlock",
        load: () => import("@/app/api/password/reset/preview/route"),
      },
      // Issue 60: the confirmation page learns only whether its own link's address is confirmed.
      {
        path: "/api/email/verify/preview",
        purpose: "verify_email",
        other: "unlock",
        load: () => import("@/app/api/email/verify/preview/route"),
      },
    ] as const)("$path names nobody to a stranger", ({ path, purpose, other, load }) => {
      const preview = (body: string, contentType = "application/json") =>
        load().then((route) =>
          route.POST(
            new NextRequest(`http://localhost${path}`, {
              method: "POST",
              headers: { "content-type": contentType, [PEER_HEADER]: freshAddress() },
              body,
            }),
          ),
        );

      it("answers every token that is not a live link of its kind with the one invalid-link 400, and bad shapes with a 4xx, never a 500", async () => {
        const { prismaEmailTokens } = await import("@/lib/recovery/email-tokens");
        const owner = await gate.prisma.user.findUniqueOrThrow({ where: { email: "owner@example.com" } });
        // A live token of another purpose is not this page's link.
        const foreign = await prismaEmailTokens(gate.prisma).issue(owner.id, other, owner.credentialGeneration, Date.now(), 60_000);
        const invalid = [];
        for (const token of [foreign, "A".repeat(43), "", "x".repeat(600)])
          invalid.push(await (await preview(JSON.stringify({ token }))).text());
        for (const answer of invalid) expect(JSON.parse(answer)).toMatchObject({ error: "invalid_token" });
        expect(new Set(invalid).size).toBe(1);
        for (const body of ["", "{", "[]", "null", '{"token":12}']) expect((await preview(body)).status, body).toBe(400);
        for (const type of ["text/plain", "application/x-www-form-urlencoded", ""])
          expect((await preview('{"token":"x"}', type)).status).toBe(415);
      });

      it("shows the account masked, never the address itself", async () => {
        const { prismaEmailTokens } = await import("@/lib/recovery/email-tokens");
        const owner = await gate.prisma.user.findUniqueOrThrow({ where: { email: "owner@example.com" } });
        const token = await prismaEmailTokens(gate.prisma).issue(owner.id, purpose, owner.credentialGeneration, Date.now(), 60_000);
        const res = await preview(JSON.stringify({ token }));
        expect(res.status).toBe(200);
        const text = await res.text();
        // The owner's address is confirmed: that page says so and names nobody at all.
        expect(JSON.parse(text)).toMatchObject(purpose === "verify_email" ? { confirmed: true } : { account: "o•••@example.com" });
        expect(text).not.toContain("owner@");
      });
    });

    // Invariant 7: with a second factor on, no request shape turns the password alone into a
    // session or a token. (The second step's own shapes, races included, are in second-factor.suite.ts.)
    describe("an account with a second factor: the password alone is never a session or a token", () => {
      const email = "two-step@example.com";
      let userId: string;
      let deviceCookie: string;

      beforeAll(async () => {
        userId = await register(email);
        // A known device of the owner's, from before the factor was on.
        const before = await browserSignIn(email, PASSWORD);
        deviceCookie = before.headers
          .getSetCookie()
          .find((cookie) => /gatehouse-device=/.test(cookie))!
          .split(";")[0]!;
        const secret = (await gate.factors.beginTotp(userId, "test-setup", Date.now()))!;
        const { totpCodeAt } = await import("@/lib/factors/totp");
        expect(await gate.factors.confirmTotp(userId, "test-setup", totpCodeAt(secret, Date.now()), Date.now())).toBe(true);
      });

      beforeEach(async () => {
        await gate.lockouts.reset(gate.usernameKey(email));
      });

      const noSessionNoToken = async (res: Response) => {
        expect(sessionCookieOf(res)).toBeNull();
        const body = (await res
          .clone()
          .json()
          .catch(() => ({}))) as Record<string, unknown>;
        expect(body).not.toHaveProperty("access_token");
        expect(body).not.toHaveProperty("refresh_token");
        expect(body).not.toHaveProperty("url");
        return body;
      };

      it("the browser sign-in, from a new browser and from the owner's known device, answers mfa_required", async () => {
        for (const cookie of [undefined, deviceCookie]) {
          const res = await browserSignIn(email, PASSWORD, cookie ? { cookie } : {});
          expect(res.status).toBe(401);
          expect(await noSessionNoToken(res)).toMatchObject({ error: "mfa_required" });
        }
      });

      it("the same form with duplicate fields, a query string or another path shape is no way around it", async () => {
        const shapes: import("../helpers/browser").BrowserSignIn[] = [
          { fields: { json: "false" } },
          { url: "http://localhost/api/auth/callback/credentials?json=true&code=000000" },
          { fields: { code: "000000", recoveryCode: "aaaaa-aaaaa", mfa: "done" } },
        ];
        for (const shape of shapes) {
          const res = await browserSignIn(email, PASSWORD, shape);
          // Refused (401 mfa_required, or 400 for a field the parser does not take), never a session.
          expect([400, 401], JSON.stringify(shape)).toContain(res.status);
          await noSessionNoToken(res);
        }
      });

      it("the token API, with or without a device token, answers mfa_required and no token; refresh takes no mfa_token", async () => {
        for (const deviceToken of [undefined, deviceCookie.split("=")[1]]) {
          const res = await tokenSignIn(email, PASSWORD, deviceToken ? { deviceToken } : {});
          expect(res.status).toBe(401);
          const body = await noSessionNoToken(res);
          expect(body).toMatchObject({ error: "mfa_required", mfa_token: expect.any(String) });
          const { refreshTokens } = await import("../helpers/browser");
          const refreshed = await refreshTokens(body.mfa_token as string);
          expect(refreshed.status).toBe(401);
          await noSessionNoToken(refreshed);
        }
      });

      it("the password check itself answers a pending step, never a user, whatever the intent", async () => {
        const { passwordCheck } = await import("../helpers/password-check");
        const client = { address: "203.0.113.77", key: "203.0.113.77", source: "socket" as const };
        for (const intent of [
          { kind: "sign_in", channel: "browser" },
          { kind: "sign_in", channel: "api" },
        ] as const) {
          const outcome = await passwordCheck(gate, { email, password: PASSWORD, client, intent });
          expect(outcome.ok).toBe("second_step");
          // Nothing a session or a token is made of: no device token, no session id.
          expect(outcome).not.toHaveProperty("device");
          expect(outcome).not.toHaveProperty("sessionId");
        }
      });

      it("next-auth's own callback, forced, verifies nothing and starts no session", async () => {
        const { callNextAuth } = await import("@/lib/auth/next-auth/call");
        const res = await callNextAuth(
          gate,
          new NextRequest("http://localhost/api/auth/callback/credentials", {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" },
          }),
          ["callback", "credentials"] as never,
          { email, password: PASSWORD },
        );
        expect(sessionCookieOf(res)).toBeNull();
      });
    });

    // Invariant 8: on a username under attack, no request shape turns a right password from a new
    // device into a session or a token before the mailed code. (The code's own shapes, races
    // included, are in device-confirmation.suite.ts.)
    describe("a new device of a username under attack: a right password is never a session or a token before its code", () => {
      const email = "stuffed@example.com";
      const other = "stuffed-other@example.com";
      let deviceCookie: string;
      let otherDevice: string;

      beforeAll(async () => {
        await register(email);
        await register(other);
        deviceCookie = (await browserSignIn(email, PASSWORD)).headers
          .getSetCookie()
          .find((cookie) => /gatehouse-device=/.test(cookie))!
          .split(";")[0]!;
        otherDevice = (await browserSignIn(other, PASSWORD)).headers
          .getSetCookie()
          .find((cookie) => /gatehouse-device=/.test(cookie))!
          .split(";")[0]!;
      });

      // A stranger's wrong password first, each time: the username is under attack.
      beforeEach(async () => {
        await gate.lockouts.reset(gate.usernameKey(email));
        expect((await tokenSignIn(email, "a stuffed password")).status).toBe(401);
      });

      const noSessionNoToken = async (res: Response) => {
        expect(sessionCookieOf(res)).toBeNull();
        expect(res.headers.getSetCookie().some((cookie) => /gatehouse-device=/.test(cookie))).toBe(false);
        const body = (await res
          .clone()
          .json()
          .catch(() => ({}))) as Record<string, unknown>;
        for (const field of ["access_token", "refresh_token", "device_token", "url"]) expect(body).not.toHaveProperty(field);
        return body;
      };

      it("the browser sign-in, plain, with duplicate fields, a query string or another account's device cookie", async () => {
        const shapes: import("../helpers/browser").BrowserSignIn[] = [
          {},
          { fields: { json: "false" } },
          { url: "http://localhost/api/auth/callback/credentials?json=true&code=000000" },
          { fields: { code: "000000", confirmed: "true" } },
          { cookie: otherDevice },
          { cookie: "gatehouse-device=forged.forged" },
        ];
        for (const shape of shapes) {
          const res = await browserSignIn(email, PASSWORD, shape);
          // Right passwords stay counted until their code: the later shapes meet the strangers' lock (429).
          expect([400, 401, 429], JSON.stringify(shape)).toContain(res.status);
          const body = await noSessionNoToken(res);
          if (res.status === 401) expect(body).toMatchObject({ error: "device_confirmation_required" });
        }
        // The owner's own known device goes straight in.
        expect((await browserSignIn(email, PASSWORD, { cookie: deviceCookie })).status).toBe(200);
      });

      it("the token API answers with a confirmation_token that no other route takes: not refresh, not the second step's", async () => {
        const res = await tokenSignIn(email, PASSWORD, { deviceToken: otherDevice.split("=")[1] });
        expect(res.status).toBe(401);
        const body = await noSessionNoToken(res);
        expect(body).toMatchObject({ error: "device_confirmation_required", confirmation_token: expect.any(String) });
        const token = body.confirmation_token as string;
        const { refreshTokens } = await import("../helpers/browser");
        await noSessionNoToken(await refreshTokens(token));
        const mfa = await import("@/app/api/v1/authentication/token/mfa/route");
        const answered = await mfa.POST(
          new NextRequest("http://localhost/api/v1/authentication/token/mfa", {
            method: "POST",
            headers: { "content-type": "application/json", [PEER_HEADER]: freshAddress() },
            body: JSON.stringify({ mfa_token: token, code: "000000" }),
          }),
        );
        expect(answered.status).toBe(401);
        expect(await noSessionNoToken(answered)).toMatchObject({ error: "second_step_invalid" });
        // A passkey's options for it: nothing to offer (a device confirmation has no passkey step).
        const options = await import("@/app/api/auth/second-step/passkey/options/route");
        const offered = await options.POST(
          new NextRequest("http://localhost/api/auth/second-step/passkey/options", {
            method: "POST",
            headers: {
              "content-type": "application/json",
              "sec-fetch-site": "same-origin",
              cookie: `gatehouse-pending-sign-in=${token}`,
              [PEER_HEADER]: freshAddress(),
            },
            body: "{}",
          }),
        );
        expect(offered.status).toBeGreaterThanOrEqual(400);
      });

      // Without this, the factor's step was a right-password oracle on every username under attack
      // (and with `always`, or a password in the corpus): mfa_required for the right one,
      // device_confirmation_required for a wrong one, and a list checked here is worth more elsewhere.
      it("an account with a second factor answers a right password as it answers a wrong one", async () => {
        const factorEmail = "stuffed-factor@example.com";
        const factorUser = await register(factorEmail);
        const secret = (await gate.factors.beginTotp(factorUser, "test-setup", Date.now()))!;
        const { totpCodeAt } = await import("@/lib/factors/totp");
        expect(await gate.factors.confirmTotp(factorUser, "test-setup", totpCodeAt(secret, Date.now()), Date.now())).toBe(true);
        expect((await tokenSignIn(factorEmail, "a stuffed password")).status).toBe(401);
        const channels = [
          (password: string) => tokenSignIn(factorEmail, password),
          (password: string) => browserSignIn(factorEmail, password),
        ];
        for (const signIn of channels) {
          const right = await signIn(PASSWORD);
          const wrong = await signIn("another stuffed password");
          const answers = [
            [right.status, comparableAnswer(await noSessionNoToken(right))],
            [wrong.status, comparableAnswer(await noSessionNoToken(wrong))],
          ];
          expect(answers[0], JSON.stringify(answers)).toEqual(answers[1]);
        }
      });

      it("the password check answers a pending step, never a user, for a right password and a wrong one alike", async () => {
        const { passwordCheck } = await import("../helpers/password-check");
        const client = { address: "203.0.113.78", key: "203.0.113.78", source: "socket" as const };
        for (const password of [PASSWORD, "a stuffed password"]) {
          const outcome = await passwordCheck(gate, { email, password, client });
          expect(outcome.ok, password).toBe("second_step");
          expect(outcome).not.toHaveProperty("device");
          expect(outcome).not.toHaveProperty("sessionId");
        }
      });
    });

    describe("without server.mjs", () => {
      it("answers 503 naming server.mjs, even to a client that sends the peer header itself, and even once one is announced", async () => {
        const symbol = Symbol.for("gatehouse.peerHeader");
        const globals = globalThis as Record<symbol, unknown>;
        const saved = globals[symbol];
        const plainDatabase = await makeDatabase();
        // Built as under plain `next start`: nobody announced a peer header.
        delete globals[symbol];
        let plain: Gate | undefined;
        try {
          plain = await servedGatehouse(plainDatabase.url);
        } finally {
          globals[symbol] = saved;
        }
        // The header is read once, when the instance is built: announcing one later (or a module
        // that sets the global) does not make this instance trust what clients write in it.
        const plainChecks = await watchPasswordChecks(plain);
        try {
          const post = (path: string, type: string, body: string) =>
            new Request(`http://localhost${path}`, {
              method: "POST",
              headers: { "content-type": type, [PEER_HEADER]: freshAddress() },
              body,
            });
          const responses = [
            await (await signInRoute()).POST(post("/api/auth/callback/credentials", "application/x-www-form-urlencoded", "")),
            await (
              await import("@/app/api/v1/authentication/token/route")
            ).POST(post("/api/v1/authentication/token", "application/json", "{}")),
            await (await import("@/app/api/register/route")).POST(post("/api/register", "application/json", "{}")),
            await (
              await import("@/app/api/altcha/challenge/route")
            ).GET(new Request("http://localhost/api/altcha/challenge", { headers: { [PEER_HEADER]: freshAddress() } })),
          ];
          for (const response of responses) {
            expect(response.status).toBe(503);
            expect(response.headers.get("Retry-After")).toBe("60");
            expect(await response.json()).toMatchObject({ error: "misconfigured", message: expect.stringContaining("server.mjs") });
          }
          expect(plainChecks.verified()).toBe(0);
        } finally {
          await closeServed(plain);
          await plainDatabase.dispose();
          await serveAgain(gate);
        }
      });
    });
  });
}

onEachDatabase("attack shapes", ({ label, makeDatabase }) => attackShapeSuite(label, makeDatabase));

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { solve } from "../helpers/altcha";
import { openDatabase } from "@/lib/db/client";
import type { Gatehouse } from "@/lib/gatehouse";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";
import { onEachDatabase } from "../helpers/each-database";

type RouteModule = typeof import("@/app/api/register/route");
type ChallengeModule = typeof import("@/app/api/altcha/challenge/route");
type AccountsModule = typeof import("@/lib/users/accounts");

/** The registration route handler and sign-in verification against one real database. */
export function registrationSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`registration and sign-in on ${label}`, () => {
    let database: TestDatabase;
    let route: RouteModule;
    let challengeRoute: ChallengeModule;
    let gate: Gatehouse;
    let accounts: AccountsModule;

    beforeAll(async () => {
      announcePeerHeader();
      database = await makeDatabase();
      gate = await servedGatehouse(database.url);
      route = await import("@/app/api/register/route");
      challengeRoute = await import("@/app/api/altcha/challenge/route");
      accounts = await import("@/lib/users/accounts");
    });

    afterAll(async () => {
      await closeServed(gate);
      await database?.dispose();
    });

    const post = (body: string, contentType = "application/json", address = freshAddress()) =>
      route.POST(
        new Request("http://localhost/api/register", {
          method: "POST",
          headers: { "content-type": contentType, [PEER_HEADER]: address },
          body,
        }),
      );

    /** A fresh solved ALTCHA payload from the real challenge route. */
    async function altcha() {
      const res = await challengeRoute.GET(
        new Request("http://localhost/api/altcha/challenge", { headers: { [PEER_HEADER]: freshAddress() } }),
      );
      return solve(await res.json());
    }

    async function register(fields: Record<string, unknown>) {
      return post(JSON.stringify({ ...fields, altcha: await altcha() }));
    }

    async function userCount() {
      return gate.prisma.user.count();
    }

    it("creates an account with a normalised email, an Argon2id hash and an unverified address, answering 202", async () => {
      const res = await register({ email: "  New.User@Example.COM ", password: "a long enough passphrase" });
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ status: "check_email", message: expect.stringMatching(/check your email/i) });
      const user = await gate.prisma.user.findUniqueOrThrow({ where: { email: "new.user@example.com" } });
      expect(user.passwordHash).toMatch(/^\$argon2id\$v=19\$/);
      expect(user.emailVerifiedAt).toBeNull();
    });

    it("answers a taken address (in another case) exactly as a new one, and keeps the first account's password", async () => {
      const before = await gate.prisma.user.findUniqueOrThrow({ where: { email: "new.user@example.com" } });
      const res = await register({ email: "NEW.USER@example.com", password: "another long passphrase" });
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ status: "check_email", message: expect.stringMatching(/check your email/i) });
      const after = await gate.prisma.user.findUniqueOrThrow({ where: { email: "new.user@example.com" } });
      expect(after.passwordHash).toBe(before.passwordHash);
    });

    it("lets exactly one of five parallel registrations of one address create it, answering all five alike", async () => {
      const bodies = await Promise.all(
        Array.from({ length: 5 }, async () =>
          JSON.stringify({ email: "race@example.com", password: "a long enough passphrase", altcha: await altcha() }),
        ),
      );
      const statuses = (await Promise.all(bodies.map((body) => post(body)))).map((r) => r.status);
      expect(statuses).toEqual([202, 202, 202, 202, 202]);
      expect(await gate.prisma.user.count({ where: { email: "race@example.com" } })).toBe(1);
    });

    it.each([
      ["malformed JSON", "{not json", "application/json", 400, "invalid_json"],
      ["a non-JSON content type", "email=a", "text/plain", 415, "unsupported_media_type"],
      ["missing fields", "{}", "application/json", 400, "invalid_input"],
      ["non-string fields", JSON.stringify({ email: 7, password: { a: 1 } }), "application/json", 400, "invalid_input"],
      [
        "a malformed email",
        JSON.stringify({ email: "nope", password: "a long enough passphrase" }),
        "application/json",
        400,
        "invalid_input",
      ],
      [
        "an 11-character password",
        JSON.stringify({ email: "short@example.com", password: "x".repeat(11) }),
        "application/json",
        400,
        "invalid_input",
      ],
      [
        "a 10,000-character password",
        JSON.stringify({ email: "huge@example.com", password: "x".repeat(10_000) }),
        "application/json",
        400,
        "invalid_input",
      ],
      [
        "a 1 MB body",
        JSON.stringify({ email: "mb@example.com", password: "x".repeat(1024 * 1024) }),
        "application/json",
        413,
        "payload_too_large",
      ],
    ])("refuses %s with a JSON error and writes nothing", async (_name, body, type, status, error) => {
      const before = await userCount();
      const res = await post(body, type);
      expect(res.status).toBe(status);
      const json = await res.json();
      expect(json).toMatchObject({ error });
      expect(JSON.stringify(json)).not.toMatch(/at .*\.(ts|js):\d+/);
      expect(await userCount()).toBe(before);
    });

    it("requires a fresh ALTCHA solution: missing or replayed → 400 captcha_invalid, no account", async () => {
      const missing = await post(JSON.stringify({ email: "bot@example.com", password: "a long enough passphrase" }));
      expect(missing.status).toBe(400);
      expect(await missing.json()).toMatchObject({ error: "captcha_invalid", reason: "missing" });

      const payload = await altcha();
      expect(
        (await post(JSON.stringify({ email: "once@example.com", password: "a long enough passphrase", altcha: payload }))).status,
      ).toBe(202);
      const replay = await post(JSON.stringify({ email: "twice@example.com", password: "a long enough passphrase", altcha: payload }));
      expect(replay.status).toBe(400);
      expect(await replay.json()).toMatchObject({ error: "captcha_invalid", reason: "replayed" });
      expect(await gate.prisma.user.count({ where: { email: { in: ["bot@example.com", "twice@example.com"] } } })).toBe(0);
    });

    it("limits registrations per address (20 per hour): the 21st gets 429 with Retry-After", async () => {
      const address = freshAddress();
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) {
        // Invalid bodies still spend the address's allowance: the limiter runs before parsing.
        statuses.push((await post("{}", "application/json", address)).status);
      }
      expect(statuses.every((status) => status === 400)).toBe(true);
      const refused = await post("{}", "application/json", address);
      expect(refused.status).toBe(429);
      // One token every 3 minutes: Retry-After is whole seconds, rounded up.
      expect(refused.headers.get("Retry-After")).toBe("180");
      expect(await refused.json()).toMatchObject({ error: "rate_limited", retryAfterSeconds: 180 });
      expect((await post("{}", "application/json", freshAddress())).status).toBe(400);
    });

    it("refuses a common, repetitive, email-bearing or guessable password with a 400 that says why, creating nothing", async () => {
      const before = await userCount();
      const cases: [string, string, RegExp][] = [
        ["common@example.com", "passwordpassword", /list of common passwords/],
        ["common@example.com", "QwertyUIOP12345", /list of common passwords/],
        ["repeat@example.com", "aaaaaaaaaaaaaaaa", /repeated/],
        ["someone.special@example.com", "Someone.Special1234", /email/],
        ["guessable@example.com", "sunshine2024sunshine", /patterns that attackers try early/],
        ["short@example.com", "Vk7#qpZ!e2", /at least 15/],
      ];
      for (const [email, password, why] of cases) {
        const res = await register({ email, password });
        expect(res.status, password).toBe(400);
        expect(await res.json()).toMatchObject({ error: "invalid_input", fields: { password: expect.stringMatching(why) } });
      }
      expect(await userCount()).toBe(before);
    });

    it("names the failing fields in a 400", async () => {
      const res = await post(JSON.stringify({ email: "nope", password: "short" }));
      expect((await res.json()).fields).toEqual({ email: expect.any(String), password: expect.any(String) });
    });

    it("verifies the right password, refuses a wrong one and an unknown user alike", async () => {
      const { argon2Params } = await import("@/lib/password/hash");
      const { argon2Hasher } = await import("@/lib/password/hash");
      const params = argon2Hasher(argon2Params("test"));
      expect(
        await accounts.verifyCredentials(gate.sql, { email: "new.user@example.com", password: "a long enough passphrase" }, params),
      ).toMatchObject({
        email: "new.user@example.com",
      });
      expect(
        await accounts.verifyCredentials(gate.sql, { email: "new.user@example.com", password: "wrong passphrase!!" }, params),
      ).toBeNull();
      expect(
        await accounts.verifyCredentials(gate.sql, { email: "nobody@example.com", password: "a long enough passphrase" }, params),
      ).toBeNull();
    });

    it("re-hashes a weaker stored hash on a successful sign-in", async () => {
      const { OWASP_ARGON2ID: owasp, TEST_ARGON2ID } = await import("@/lib/password/hash");
      const { argon2Hasher } = await import("@/lib/password/hash");
      const OWASP_ARGON2ID = argon2Hasher(owasp);
      const prisma = gate.prisma;
      const result = await accounts.verifyCredentials(
        gate.sql,
        { email: "new.user@example.com", password: "a long enough passphrase" },
        OWASP_ARGON2ID,
      );
      expect(result?.rehashed).toBe(true);
      const user = await prisma.user.findUniqueOrThrow({ where: { email: "new.user@example.com" } });
      expect(user.passwordHash).toContain("$m=19456,t=2,p=1$");
      // Once upgraded, a sign-in with the same parameters leaves it alone.
      expect(
        (
          await accounts.verifyCredentials(
            gate.sql,
            { email: "new.user@example.com", password: "a long enough passphrase" },
            OWASP_ARGON2ID,
          )
        )?.rehashed,
      ).toBe(false);
      expect(TEST_ARGON2ID.memoryCostKiB).toBeLessThan(owasp.memoryCostKiB);
    });

    it("keeps the data across a restart (close and reopen)", async () => {
      await closeServed(gate);
      const reopened = await openDatabase(gate.config.database.target);
      try {
        expect(await reopened.prisma.user.count({ where: { email: "new.user@example.com" } })).toBe(1);
      } finally {
        await reopened.close();
      }
    });
  });
}

onEachDatabase("registration", ({ label, makeDatabase }) => registrationSuite(label, makeDatabase));

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestDatabase } from "../helpers/databases";

type Authorize = (credentials: Record<string, string>, req: unknown) => Promise<unknown>;

/**
 * The account lockout through next-auth's real credentials authorize() and a real database.
 * (The HTTP sequence through the route handler is in e2e/sign-in-protection.spec.ts.)
 */
export function lockoutSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`account lockout on ${label}`, () => {
    let database: TestDatabase;
    let authorize: Authorize;
    const PASSWORD = "the right passphrase";

    const globals = globalThis as { __gatehouseDb?: unknown; __gatehouse?: unknown };

    async function gate() {
      return (await import("@/lib/auth/gatehouse")).gatehouse();
    }

    async function failureCount(email: string) {
      const { prisma } = await import("@/lib/db/client");
      const g = await gate();
      const row = await (await prisma()).signInLockout.findUnique({ where: { usernameKey: g.usernameKey(email) } });
      return row?.failureCount ?? 0;
    }

    beforeAll(async () => {
      database = await makeDatabase();
      process.env.DATABASE_URL = database.url;
      const { authOptions } = await import("@/lib/auth/options");
      const provider = authOptions().providers[0] as unknown as { options: { authorize: Authorize } };
      authorize = provider.options.authorize;
      const { registerAccount } = await import("@/lib/users/accounts");
      const { prisma } = await import("@/lib/db/client");
      const g = await gate();
      await registerAccount(await prisma(), { email: "victim@example.com", password: PASSWORD }, g.argon2);
      await registerAccount(await prisma(), { email: "restart@example.com", password: PASSWORD }, g.argon2);
    });

    afterAll(async () => {
      const { getDatabase } = await import("@/lib/db/client");
      await (await getDatabase()).close();
      await database?.dispose();
    });

    it("counts 50 parallel wrong passwords for one username exactly", async () => {
      const results = await Promise.all(Array.from({ length: 50 }, () => authorize({ email: "victim@example.com", password: "wrong guess" }, {})));
      expect(results.every((result) => result === null)).toBe(true);
      expect(await failureCount("victim@example.com")).toBe(50);
    });

    it("counts failures for usernames that do not exist, the same way", async () => {
      for (let i = 0; i < 3; i++) await authorize({ email: "Ghost@Example.com ", password: "wrong guess" }, {});
      expect(await failureCount("ghost@example.com")).toBe(3);
    });

    it("resets the count on a successful sign-in", async () => {
      await authorize({ email: "reset@example.com", password: "wrong" }, {});
      const { registerAccount } = await import("@/lib/users/accounts");
      const { prisma } = await import("@/lib/db/client");
      await registerAccount(await prisma(), { email: "reset@example.com", password: PASSWORD }, (await gate()).argon2);
      expect(await failureCount("reset@example.com")).toBe(1);
      expect(await authorize({ email: "reset@example.com", password: PASSWORD }, {})).toMatchObject({ email: "reset@example.com" });
      expect(await failureCount("reset@example.com")).toBe(0);
    });

    it("keeps a lockout across an app restart", async () => {
      for (let i = 0; i < 5; i++) await authorize({ email: "restart@example.com", password: "wrong guess" }, {});
      const before = await gate();
      expect((await before.lockouts.check(before.usernameKey("restart@example.com"), Date.now())).locked).toBe(true);

      // A restart: the database closes and every in-process layer (limiter memory included) is rebuilt.
      const { getDatabase } = await import("@/lib/db/client");
      await (await getDatabase()).close();
      globals.__gatehouseDb = undefined;
      globals.__gatehouse = undefined;

      const after = await gate();
      expect(after).not.toBe(before);
      const check = await after.lockouts.check(after.usernameKey("restart@example.com"), Date.now());
      expect(check.locked).toBe(true);
      expect(check.locked && check.retryAfterMs).toBeGreaterThan(50_000);
    });
  });
}

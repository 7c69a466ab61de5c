import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gatehouse } from "@/lib/gatehouse";
import { registerAccount } from "@/lib/users/accounts";
import type { TestDatabase } from "../helpers/databases";
import { testGatehouse } from "../helpers/instance";
import { passwordCheck } from "../helpers/password-check";
import { watchPasswordChecks } from "../helpers/verifications";
import { onEachDatabase } from "../helpers/each-database";

/**
 * The account lockout at the password check (through its corridor, signInWithPassword) on a real database. The HTTP shapes
 * that lead there are in attack-shapes.suite.ts and e2e/attack-shapes.spec.ts.
 */
export function lockoutSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`account lockout on ${label}`, () => {
    let database: TestDatabase;
    let gate: Gatehouse;
    let checks: Awaited<ReturnType<typeof watchPasswordChecks>>;
    const PASSWORD = "the right passphrase";
    // Room for every parallel check in the queue: this suite is about the lockout, not the budget.
    // The lockout alone: no device confirmation after a failure (tests/integration/device-confirmation.suite.ts has it).
    const SETTINGS = { HASH_QUEUE: "100", NEW_DEVICE_CONFIRMATION: "off" };

    const client = (n: number) => ({ address: `203.0.113.${n % 250}`, key: `203.0.113.${n % 250}`, source: "socket" as const });

    /** The password check, through the corridor a sign-in route runs after its route limits. */
    async function check(email: string, password: string, n = 1) {
      return passwordCheck(gate, { email, password, client: client(n) });
    }

    async function failureCount(email: string) {
      const row = await gate.prisma.signInLockout.findUnique({ where: { usernameKey: gate.usernameKey(email) } });
      return row?.failureCount ?? 0;
    }

    beforeAll(async () => {
      database = await makeDatabase();
      gate = await testGatehouse(database.url, SETTINGS);
      for (const email of ["victim@example.com", "restart@example.com", "reset@example.com"]) {
        await registerAccount(gate.prisma, { email, password: PASSWORD }, gate.hasher, Date.now());
      }
      checks = await watchPasswordChecks(gate);
    });

    afterAll(async () => {
      await gate?.close();
      await database?.dispose();
    });

    it("lets at most the threshold of 50 parallel wrong passwords reach Argon2id, each counted once", async () => {
      checks.reset();
      const outcomes = await Promise.all(Array.from({ length: 50 }, (_, n) => check("victim@example.com", "wrong guess", n)));
      expect(outcomes.every((outcome) => outcome.ok === false)).toBe(true);
      const refusedLocked = outcomes.filter((outcome) => !outcome.ok && outcome.refusal?.status === 429).length;
      expect(checks.verified()).toBe(5);
      expect(refusedLocked).toBe(45);
      expect(await failureCount("victim@example.com")).toBe(5);
      // The right password, now: refused by the lock, not verified.
      const owner = await check("victim@example.com", PASSWORD);
      expect(owner.ok).toBe(false);
      expect(!owner.ok && (await owner.refusal?.json())).toMatchObject({ error: "locked" });
      expect(checks.verified()).toBe(5);
    });

    it("counts failures for usernames that do not exist, the same way", async () => {
      for (let i = 0; i < 3; i++) await check("ghost@example.com", `wrong guess ${i}`);
      expect(await failureCount("ghost@example.com")).toBe(3);
    });

    it("resets the count on a successful sign-in", async () => {
      await check("reset@example.com", "wrong");
      expect(await failureCount("reset@example.com")).toBe(1);
      expect(await check("reset@example.com", PASSWORD)).toMatchObject({ ok: true, user: { email: "reset@example.com" } });
      expect(await failureCount("reset@example.com")).toBe(0);
    });

    it("keeps a lockout across an app restart", async () => {
      for (let i = 0; i < 5; i++) await check("restart@example.com", `wrong guess ${i}`);
      const before = gate;
      expect((await before.lockouts.check(before.usernameKey("restart@example.com"), Date.now(), before.config.lockout)).locked).toBe(true);

      // A restart, in the order the server stops (background work, mail, stores, then the database);
      // every in-process layer (limiter memory included) is rebuilt.
      await before.close();
      const after = (gate = await testGatehouse(database.url, SETTINGS));
      expect(after).not.toBe(before);
      const state = await after.lockouts.check(after.usernameKey("restart@example.com"), Date.now(), after.config.lockout);
      expect(state.locked).toBe(true);
      expect(state.locked && state.retryAfterMs).toBeGreaterThan(50_000);
    });
  });
}

onEachDatabase("account lockout", ({ label, makeDatabase }) => lockoutSuite(label, makeDatabase));

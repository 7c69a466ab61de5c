import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { PasswordHasher } from "@/lib/password/hash";

/** A hasher that counts its verifications: how a test sees how many Argon2id checks a shape reached. */
function counting(inner: PasswordHasher): { hasher: PasswordHasher; verifications: () => number } {
  let verifications = 0;
  return {
    hasher: {
      params: inner.params,
      hash: (password) => inner.hash(password),
      verify: (storedHash, password) => {
        verifications += 1;
        return inner.verify(storedHash, password);
      },
    },
    verifications: () => verifications,
  };
}

/**
 * The composition root is pure: createGatehouse(config, database, options) builds everything from
 * its arguments. Two instances with different configurations live in one process whose
 * environment is empty, each with its own logger, lockout rule and hasher.
 */
describe("the composition root", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-pure-"));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  // Two PGlite databases, each migrated from scratch: past the 30 s default on a busy shared machine.
  it(
    "builds two differently configured instances while process.env is empty, counting Argon2id through injected hashers",
    { timeout: 120_000 },
    async () => {
      const { parseConfig } = await import("@/lib/config/env");
      const { openDatabase } = await import("@/lib/db/client");
      const { createGatehouse } = await import("@/lib/gatehouse");
      const { argon2Hasher } = await import("@/lib/password/hash");
      const { argon2Params } = await import("@/lib/password/hash");
      const { registerAccount } = await import("@/lib/users/accounts");
      const { passwordCheck } = await import("../helpers/password-check");

      const saved = process.env;
      process.env = {} as NodeJS.ProcessEnv;
      const gates: Awaited<ReturnType<typeof createGatehouse>>[] = [];
      try {
        const build = async (name: string, settings: Record<string, string>) => {
          const config = parseConfig(
            {
              NEXTAUTH_SECRET: name.repeat(32),
              ARGON2_PROFILE: "test",
              DATABASE_URL: `pglite:${path.join(root, name)}`,
              // Its own mail folder: with process.env empty the default (.data/outbox) is the repository's.
              MAIL_OUTBOX_DIR: path.join(root, `${name}-outbox`),
              NEW_DEVICE_CONFIRMATION: "off",
              ...settings,
            },
            { devServer: false },
          );
          const counter = counting(argon2Hasher(argon2Params(config.passwords.argon2Profile)));
          const gate = await createGatehouse(config, await openDatabase(config.database.target), { hasher: counter.hasher });
          gates.push(gate);
          return { gate, counter };
        };
        const a = await build("a", { LOG_LEVEL: "silent", LOCKOUT_THRESHOLD: "2" });
        const b = await build("b", { LOG_LEVEL: "warn", LOCKOUT_THRESHOLD: "7" });
        expect(Object.keys(process.env)).toEqual([]);
        expect([a.gate.log.level, b.gate.log.level]).toEqual(["silent", "warn"]);

        const client = { address: "203.0.113.9", key: "203.0.113.9", source: "socket" as const };
        for (const { gate } of [a, b]) {
          await registerAccount(gate.prisma, { email: "owner@example.com", password: "the right passphrase" }, gate.hasher, Date.now());
          for (let i = 0; i < 2; i++) {
            const outcome = await passwordCheck(gate, { email: "owner@example.com", password: `guess ${i}`, client, route: "/test" });
            expect(outcome).toEqual({ ok: false, refusal: null });
          }
        }
        // Two verifications each, counted by each instance's own hasher; only A's rule locks at two.
        expect([a.counter.verifications(), b.counter.verifications()]).toEqual([2, 2]);
        const locked = async (gate: (typeof gates)[number]) =>
          (await gate.lockouts.check(gate.usernameKey("owner@example.com"), Date.now(), gate.config.lockout)).locked;
        expect([await locked(a.gate), await locked(b.gate)]).toEqual([true, false]);
        // Their keys come from their own secrets: one's lockout key means nothing to the other.
        expect(a.gate.usernameKey("owner@example.com")).not.toBe(b.gate.usernameKey("owner@example.com"));
      } finally {
        process.env = saved;
        await Promise.all(gates.map((gate) => gate.close()));
      }
      // A's lock mailed its owner (a closed instance has sent what it promised), into A's own outbox.
      const mailed = (name: string) =>
        fs.existsSync(path.join(root, `${name}-outbox`)) ? fs.readdirSync(path.join(root, `${name}-outbox`)) : [];
      expect([mailed("a").filter((file) => file.endsWith(".eml")).length, mailed("b").length]).toEqual([1, 0]);
    },
  );

  it("and its room builders (lib/gatehouse/) read no environment and no global slot", () => {
    const files = ["lib/gatehouse.ts", ...fs.readdirSync("lib/gatehouse").map((name) => `lib/gatehouse/${name}`)];
    expect(files.length).toBeGreaterThan(1);
    for (const file of files) expect(fs.readFileSync(file, "utf8"), file).not.toMatch(/process\.env|globalThis/);
  });
});

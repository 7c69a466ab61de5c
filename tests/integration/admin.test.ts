import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { runScript } from "../helpers/cli";
import { afterAll, describe, expect, it } from "vitest";

const PASSWORD = "the right passphrase";

/** `npm run admin -- …` as an operator runs it, against a real PGlite folder. */
describe("the admin command line", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-admin-"));
  const dataDir = path.join(root, "pglite");
  const env = { ...process.env, DATABASE_URL: `pglite:${dataDir}`, NEXTAUTH_SECRET: randomBytes(32).toString("hex"), LOG_LEVEL: "warn" };
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  const admin = (...args: string[]) => runScript("admin", args, env);

  /** Opens the folder as the app does, runs `work`, and closes it (PGlite: one process at a time). */
  async function withDatabase<T>(
    work: (prisma: import("@/lib/generated/prisma/client").PrismaClient, sql: import("@/lib/db/sql").Sql) => Promise<T>,
  ): Promise<T> {
    const { openDatabase } = await import("@/lib/db/client");
    const db = await openDatabase({ kind: "pglite", dataDir });
    try {
      return await work(db.prisma, db.sql);
    } finally {
      await db.close();
    }
  }

  it(
    "unlocks, lists lockouts, signs out everywhere, shows events and deletes an account, each on the record",
    { timeout: 240_000 },
    async () => {
      const { registerAccount } = await import("@/lib/users/accounts");
      const { argon2Params } = await import("@/lib/password/hash");
      const { argon2Hasher } = await import("@/lib/password/hash");
      const { digestKey } = await import("@/lib/rate-limit/limiter");
      const { parseConfig } = await import("@/lib/config/env");
      const { sqlLockoutRepository } = await import("@/lib/lockout/repository");
      // The same username key as the command computes: the secret comes from the same settings.
      const key = digestKey(parseConfig(env).rateLimit.keySecret, ["lockout", "locked@example.com"]);
      // The instance's own policy: a lock longer than its schedule allows reads as a clock step and is over.
      const policy = parseConfig(env).lockout;
      const userId = await withDatabase(async (prisma, sql) => {
        const created = await registerAccount(
          prisma,
          { email: "locked@example.com", password: PASSWORD },
          argon2Hasher(argon2Params("owasp")),
          Date.now(),
        );
        if (!created.ok) throw new Error("registration failed");
        const lockouts = sqlLockoutRepository(sql);
        for (let i = 0; i < policy.threshold + 1; i++) await lockouts.admitAttempt(key, Date.now(), policy);
        await prisma.browserSession.create({
          data: {
            id: "s".repeat(22),
            userId: created.user.id,
            browser: "Firefox",
            address: "198.51.100.x",
            createdAt: new Date(),
            lastSeenAt: new Date(),
            expiresAt: new Date(Date.now() + 3_600_000),
          },
        });
        await prisma.report.create({ data: { userId: created.user.id, content: {} } });
        await prisma.passkey.create({
          data: {
            userId: created.user.id,
            credentialId: "cred-1",
            publicKey: "AAAA",
            deviceType: "singleDevice",
            backedUp: false,
            name: "Work laptop",
            createdAt: new Date(),
          },
        });
        return created.user.id;
      });

      const listed = await admin("lockouts");
      expect(listed, listed.out).toMatchObject({ code: 0 });
      expect(listed.out).toContain(key.slice(0, 16));
      expect(listed.out).not.toContain("locked@example.com");

      expect((await admin("unlock", " Locked@Example.com ")).out).toContain("Unlocked locked@example.com.");
      expect((await admin("lockouts")).out).toContain("No username is locked.");

      const revoked = await admin("revoke-sessions", "locked@example.com");
      expect(revoked.out).toContain("1 browser sessions");
      expect(await withDatabase((prisma) => prisma.browserSession.count({ where: { userId, revokedAt: null } }))).toBe(0);

      const passkeys = await admin("passkeys", "locked@example.com");
      expect(passkeys.out).toContain("Work laptop");
      const passkeyId = passkeys.out.trim().split(/\s+/)[0]!;
      expect(await admin("remove-passkey", "locked@example.com", "not-an-id")).toMatchObject({ code: 1 });
      expect((await admin("remove-passkey", "locked@example.com", passkeyId)).out).toContain('Removed the passkey "Work laptop"');
      expect((await admin("passkeys", "locked@example.com")).out).toContain("has no passkeys");

      const events = await admin("events", "locked@example.com");
      expect(events.out).toMatch(/admin_passkey_removed/);
      expect(events.out).toMatch(/admin_sessions_revoked\s+Administrator \(command line\)/);
      expect(events.out).toMatch(/admin_unlocked/);

      const deleted = await admin("delete-user", "locked@example.com");
      expect(deleted, deleted.out).toMatchObject({ code: 0 });
      const left = await withDatabase(async (prisma) => ({
        users: await prisma.user.count({ where: { id: userId } }),
        sessions: await prisma.browserSession.count({ where: { userId } }),
        reports: await prisma.report.count({ where: { userId } }),
        events: await prisma.securityEvent.count({ where: { userId } }),
      }));
      expect(left).toEqual({ users: 0, sessions: 0, reports: 0, events: 0 });

      // Refusals: an unknown account, an unknown command.
      expect(await admin("events", "locked@example.com")).toMatchObject({
        code: 1,
        out: expect.stringContaining("No account has the address locked@example.com"),
      });
      expect(await admin("drop-everything")).toMatchObject({ code: 1, out: expect.stringContaining("usage: npm run admin") });
    },
  );
});

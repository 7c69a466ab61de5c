import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestDatabase } from "../helpers/databases";
import { testGatehouse } from "../helpers/instance";
import type { MailMessage } from "@/lib/mail/types";
import { sqlKnownDevices } from "@/lib/devices/known-devices";
import type { Sql } from "@/lib/db/sql";
import { onEachDatabase } from "../helpers/each-database";

type Gate = import("@/lib/gatehouse").Gatehouse;

const DAY_MS = 86_400_000;

/**
 * The stores' one-statement writes (issue 28: a sign-in's round trips), on a real database: each
 * table still cleans up after itself as it did when the write and the cleanup were two statements,
 * and the lockout's compare-and-set counts every one of many parallel attempts.
 */
export function storeWritesSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`store writes on ${label}`, () => {
    let database: TestDatabase;
    let gate: Gate;

    beforeAll(async () => {
      database = await makeDatabase();
      gate = await testGatehouse(database.url);
    });

    afterAll(async () => {
      await gate?.close();
      await database?.dispose();
    });

    it("a new device keeps the username's newest 20 live devices and drops the rest", async () => {
      const key = gate.usernameKey("devices@example.com");
      const other = gate.usernameKey("someone-else@example.com");
      const t0 = Date.now();
      const theirs = await gate.devices.issue(other, t0);
      const issued = [];
      for (let i = 0; i < 21; i++) issued.push(await gate.devices.issue(key, t0 + i));
      expect(await gate.prisma.knownDevice.count({ where: { usernameKey: key } })).toBe(20);
      expect(await gate.devices.recognise(issued[0]!.token, key, t0 + 21)).toBeNull();
      expect(await gate.devices.recognise(issued[1]!.token, key, t0 + 21)).not.toBeNull();
      expect(await gate.devices.recognise(issued[20]!.token, key, t0 + 21)).not.toBeNull();
      // Past their lifetime, all of them go with the next one issued; another username's stay.
      const later = issued[20]!.expiresAtMs + 1;
      const fresh = await gate.devices.issue(key, later);
      expect(await gate.prisma.knownDevice.findMany({ where: { usernameKey: key }, select: { id: true } })).toEqual([{ id: fresh.id }]);
      expect(await gate.prisma.knownDevice.count({ where: { id: theirs.id } })).toBe(1);
    });

    it("a new device replaces only a device of its own username", async () => {
      const key = gate.usernameKey("replacing@example.com");
      const other = gate.usernameKey("not-replaced@example.com");
      const now = Date.now();
      const theirs = await gate.devices.issue(other, now);
      const mine = await gate.devices.issue(key, now);
      // Another username's device id given as the one replaced: it stays.
      await gate.devices.issue(key, now + 1, theirs.id);
      expect(await gate.prisma.knownDevice.count({ where: { id: theirs.id } })).toBe(1);
      // This username's own: it goes.
      await gate.devices.issue(key, now + 2, mine.id);
      expect(await gate.prisma.knownDevice.count({ where: { id: mine.id } })).toBe(0);
    });

    it("a device is claimed by one sign-in at a time, and again once the claim lapses; a gone one is told apart", async () => {
      const key = gate.usernameKey("claims@example.com");
      const now = Date.now();
      const { id } = await gate.devices.issue(key, now);
      expect(await gate.devices.claim(id, key, now, 1_000)).toBe("claimed");
      expect(await gate.devices.claim(id, key, now + 999, 1_000)).toBe("in_use");
      expect(await gate.devices.claim(id, key, now + 1_000, 1_000)).toBe("claimed");
      await gate.devices.release(id, now + 2_000);
      expect(await gate.devices.claim(id, key, now + 1_001, 1_000)).toBe("claimed");
      // Another username's claim on it finds nothing of its own, and takes nothing.
      await gate.devices.release(id, now + 2_001);
      expect(await gate.devices.claim(id, gate.usernameKey("other@example.com"), now + 1_002, 1_000)).toBe("gone");
      expect(await gate.devices.claim(id, key, now + 1_003, 1_000)).toBe("claimed");
      await gate.devices.forget(id);
      expect(await gate.devices.claim(id, key, now + 5_000, 1_000)).toBe("gone");
    });

    // A claim is a lease that lapses by itself (record 18): its statement turns synchronous_commit
    // off for its own transaction, which in production is the statement alone (Sql's autocommit).
    // Here it runs inside one, so that the setting can be read after it: a commit's own flush is
    // not observable from outside without racing every other test's writes.
    it("a claim's statement turns synchronous_commit off for its own transaction, and for no later one", async () => {
      const key = gate.usernameKey("lease@example.com");
      const now = Date.now();
      const { id } = await gate.devices.issue(key, now);
      const setting = async (sql: Pick<Sql, "rows">) =>
        (await sql.rows<{ value: string }>(`SELECT current_setting('synchronous_commit') AS "value"`))[0]!.value;
      const before = await setting(gate.sql);
      expect(before).not.toBe("off");
      const inOneTransaction = await gate.prisma.$transaction(async (tx) => {
        const sql: Sql = {
          rows: (text, values = []) => tx.$queryRawUnsafe(text, ...values),
          run: (text, values = []) => tx.$executeRawUnsafe(text, ...values),
        };
        const devices = sqlKnownDevices(sql, { secret: "unused by a claim", lifetimeMs: DAY_MS });
        const claimed = await devices.claim(id, key, now, 1_000);
        return { claimed, after: await setting(sql) };
      });
      expect(inOneTransaction).toEqual({ claimed: "claimed", after: "off" });
      // On PostgreSQL the pool hands out the connection released last: the transaction's.
      expect(await setting(gate.sql)).toBe(before);
      expect(await gate.devices.claim(id, key, now + 1, 1_000)).toBe("in_use");
    });

    it("a claim that lapsed releases only itself: the sign-in that claimed the device after it keeps it", async () => {
      const key = gate.usernameKey("stalled-claim@example.com");
      const now = Date.now();
      const { id } = await gate.devices.issue(key, now);
      // A sign-in stalls past its claim; another claims the device once it lapsed.
      expect(await gate.devices.claim(id, key, now, 1_000)).toBe("claimed");
      expect(await gate.devices.claim(id, key, now + 1_500, 1_000)).toBe("claimed");
      // The stalled one finishes and lets go of its own claim, which is no longer there.
      await gate.devices.release(id, now + 1_000);
      expect(await gate.devices.claim(id, key, now + 1_600, 1_000)).toBe("in_use");
      // The live claim's own release frees it.
      await gate.devices.release(id, now + 2_500);
      expect(await gate.devices.claim(id, key, now + 1_700, 1_000)).toBe("claimed");
    });

    it("a spooled message's lease runs from its last attempt, and a later sweep gets its count within a minute", async () => {
      const { prismaMailSpool } = await import("@/lib/mail/spool");
      let nowMs = Date.now();
      const spool = prismaMailSpool(gate.prisma, () => nowMs);
      // A killed process's rows are taken over by a sweep within a lease and a sweep's interval: under a minute.
      expect(spool.takeOverEveryMs).toBeLessThanOrEqual(20_000);
      const message: MailMessage = { kind: "verify_email", to: "spool@example.com", subject: "s", text: "t", html: "h", links: [] };
      await spool.save([{ id: "leased", message, attempts: 1 }]);
      expect((await spool.claim(10)).map((row) => row.id)).toEqual(["leased"]);
      // Tried again near the end of its lease: the count is written, and the lease runs again.
      nowMs += 35_000;
      await spool.retrying("leased", 2);
      nowMs += 30_000;
      expect(await spool.claim(10)).toEqual([]);
      // The process died: after the lease, a sweep takes it with the attempts it had.
      nowMs += 11_000;
      expect(await spool.claim(10)).toMatchObject([{ id: "leased", attempts: 2 }]);
      // The mailer's heartbeat keeps a row that waits its turn, without an attempt of its own.
      nowMs += spool.renewEveryMs;
      await spool.renew(["leased"]);
      nowMs += spool.renewEveryMs * 3;
      expect(await spool.claim(10)).toEqual([]);
      await spool.settled("leased");
      // A renewal of a row settled meanwhile writes nothing.
      await spool.retrying("leased", 3);
      await spool.renew(["leased"]);
      expect(await gate.prisma.mailSpool.count({ where: { id: "leased" } })).toBe(0);
    });

    it("a promise of mail is held for its process, becomes its message, and a clean stop hands it back", async () => {
      const { prismaMailSpool } = await import("@/lib/mail/spool");
      let nowMs = Date.now();
      const spool = prismaMailSpool(gate.prisma, () => nowMs);
      await spool.hold("promised", "password_reset", { do: "password_reset", email: "promise@example.com" });
      expect(await spool.claim(10)).toEqual([]);
      // Its process was killed before the message existed: a sweep after the lease gets the promise.
      nowMs += 41_000;
      expect(await spool.claim(10)).toEqual([
        { id: "promised", intent: { do: "password_reset", email: "promise@example.com" }, attempts: 0 },
      ]);
      const message: MailMessage = { kind: "password_reset", to: "promise@example.com", subject: "s", text: "t", html: "h", links: [] };
      await spool.rendered("promised", message);
      await spool.handBack(["promised"]);
      expect(await spool.claim(10)).toMatchObject([{ id: "promised", message, attempts: 0 }]);
      await spool.settled("promised");
    });

    it("a new session drops the user's sessions long over, and no one else's", async () => {
      const [user, other] = await Promise.all(
        ["sessions@example.com", "bystander@example.com"].map((email) =>
          gate.prisma.user.create({ data: { email, passwordHash: "unused" } }),
        ),
      );
      const t0 = Date.now() - 60 * DAY_MS;
      const fields = { credentialGeneration: 0, browser: "Firefox on Linux", address: "192.0.2.0" };
      const old = await gate.sessions.create({ ...fields, userId: user!.id, nowMs: t0, expiresAtMs: t0 + DAY_MS });
      const theirs = await gate.sessions.create({ ...fields, userId: other!.id, nowMs: t0, expiresAtMs: t0 + DAY_MS });
      const recent = await gate.sessions.create({ ...fields, userId: user!.id, nowMs: t0 + 45 * DAY_MS, expiresAtMs: t0 + 46 * DAY_MS });
      const now = t0 + 60 * DAY_MS;
      const current = await gate.sessions.create({
        ...fields,
        userId: user!.id,
        nowMs: now,
        expiresAtMs: now + DAY_MS,
        authenticatedAtMs: now - 5,
      });
      const left = await gate.prisma.browserSession.findMany({
        where: { userId: user!.id },
        select: { id: true },
        orderBy: { createdAt: "asc" },
      });
      expect(left.map((row) => row.id)).toEqual([recent.id, current.id]);
      expect(left.map((row) => row.id)).not.toContain(old.id);
      expect(await gate.prisma.browserSession.count({ where: { id: theirs.id } })).toBe(1);
      expect(await gate.sessions.authenticatedAt(user!.id, current.id)).toBe(now - 5);
      expect((await gate.sessions.find(current.id))?.expiresAtMs).toBe(now + DAY_MS);
    });

    it("a session for an account that is gone is refused, as before", async () => {
      await expect(
        gate.sessions.create({
          userId: "00000000-0000-4000-8000-000000000000",
          credentialGeneration: 0,
          browser: "Firefox on Linux",
          address: "192.0.2.0",
          nowMs: Date.now(),
          expiresAtMs: Date.now() + DAY_MS,
        }),
      ).rejects.toThrow();
    });

    it("parallel failures on one key are each counted: none is lost to a concurrent write", async () => {
      const key = gate.usernameKey("parallel@example.com");
      const policy = { ...gate.config.lockout, threshold: 1_000, capFailures: 1_000 };
      const now = Date.now();
      const decisions = await Promise.all(Array.from({ length: 12 }, () => gate.lockouts.admitAttempt(key, now, policy)));
      expect(decisions.every((decision) => decision.allowed)).toBe(true);
      const counts = decisions.map((decision) => (decision.allowed ? decision.state.failureCount : 0)).sort((a, b) => a - b);
      expect(counts).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
      expect((await gate.prisma.signInLockout.findUnique({ where: { usernameKey: key } }))?.failureCount).toBe(12);
    });

    it("parallel failures past the threshold lock the key, and every later one is refused", async () => {
      const key = gate.usernameKey("locking@example.com");
      const policy = gate.config.lockout;
      const now = Date.now();
      const decisions = await Promise.all(Array.from({ length: 3 * policy.threshold }, () => gate.lockouts.admitAttempt(key, now, policy)));
      // Admitted attempts up to the threshold; the one that reaches it locks; the rest are refused.
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(policy.threshold);
      expect((await gate.lockouts.check(key, now, policy)).locked).toBe(true);
    });

    // The count may start from the check's read, taken before the hash budget's wait: a row that
    // changed meanwhile must be read again, never overwritten from the stale copy.
    it("a count from a stale check never slips past a lock written since", async () => {
      const key = gate.usernameKey("stale-lock@example.com");
      const policy = gate.config.lockout;
      const now = Date.now();
      const before = await gate.lockouts.check(key, now, policy);
      expect(before.locked).toBe(false);
      for (let i = 0; i < policy.threshold; i++) await gate.lockouts.admitAttempt(key, now, policy);
      const late = await gate.lockouts.admitAttempt(key, now, policy, before.seen);
      expect(late.allowed).toBe(false);
    });

    it("a count from a stale check that saw a lock reads again: a lock cleared since no longer refuses", async () => {
      const key = gate.usernameKey("stale-unlock@example.com");
      const policy = gate.config.lockout;
      const now = Date.now();
      for (let i = 0; i < policy.threshold; i++) await gate.lockouts.admitAttempt(key, now, policy);
      const before = await gate.lockouts.check(key, now, policy);
      expect(before.locked).toBe(true);
      await gate.lockouts.reset(key);
      const late = await gate.lockouts.admitAttempt(key, now, policy, before.seen);
      expect(late.allowed && late.state.failureCount).toBe(1);
    });

    it("a count from a stale check loses no failure counted since", async () => {
      const key = gate.usernameKey("stale-count@example.com");
      const policy = { ...gate.config.lockout, threshold: 1_000, capFailures: 1_000 };
      const now = Date.now();
      await gate.lockouts.admitAttempt(key, now, policy);
      const before = await gate.lockouts.check(key, now, policy);
      await gate.lockouts.admitAttempt(key, now, policy);
      const late = await gate.lockouts.admitAttempt(key, now, policy, before.seen);
      expect(late.allowed && late.state.failureCount).toBe(3);
      expect((await gate.prisma.signInLockout.findUnique({ where: { usernameKey: key } }))?.failureCount).toBe(3);
    });

    // A known device's count reads its username's strangers' lock in the same statement.
    it("a count alongside another key tells that key's lock under its own policy, from a presumed row too", async () => {
      const device = gate.deviceLockKey("paired-device");
      const strangers = gate.usernameKey("paired@example.com");
      const devicePolicy = gate.config.devices.lockout;
      const strangersPolicy = gate.config.lockout;
      const along = { usernameKey: strangers, policy: strangersPolicy };
      const now = Date.now();
      const presumed = { usernameKey: device, row: null };
      // Neither row exists yet.
      const fresh = await gate.lockouts.admitAttempt(device, now, devicePolicy, presumed, along);
      expect(fresh).toMatchObject({ allowed: true, state: { failureCount: 1 }, alongside: { locked: false, seen: { row: null } } });
      // The strangers locked: read under their own policy. The device's row exists now, so the
      // presumption misses and its count reads again (without the other key: none is read then).
      for (let i = 0; i < strangersPolicy.threshold; i++) await gate.lockouts.admitAttempt(strangers, now, strangersPolicy);
      const missed = await gate.lockouts.admitAttempt(device, now, devicePolicy, presumed, along);
      expect(missed.allowed && missed.state.failureCount).toBe(2);
      expect(missed.allowed && missed.alongside).toBeUndefined();
      const seen = (await gate.lockouts.check(device, now, devicePolicy)).seen;
      const paired = await gate.lockouts.admitAttempt(device, now, devicePolicy, seen, along);
      expect(paired.allowed && paired.state.failureCount).toBe(3);
      expect(paired.allowed && paired.alongside).toMatchObject({ locked: true, capped: false });
      expect((await gate.prisma.signInLockout.findUnique({ where: { usernameKey: strangers } }))?.failureCount).toBe(
        strangersPolicy.threshold,
      );
    });

    it("a reset as seen leaves a streak counted since the read", async () => {
      const key = gate.usernameKey("reset-as-seen@example.com");
      const policy = { ...gate.config.lockout, threshold: 1_000, capFailures: 1_000 };
      const now = Date.now();
      await gate.lockouts.admitAttempt(key, now, policy);
      const before = await gate.lockouts.check(key, now, policy);
      await gate.lockouts.admitAttempt(key, now + 1, policy);
      await gate.lockouts.resetAsSeen(before.seen);
      expect((await gate.prisma.signInLockout.findUnique({ where: { usernameKey: key } }))?.failureCount).toBe(2);
      await gate.lockouts.resetAsSeen((await gate.lockouts.check(key, now + 2, policy)).seen);
      expect((await gate.prisma.signInLockout.findUnique({ where: { usernameKey: key } }))?.failureCount).toBe(0);
    });

    it("a count from a check's read tells the failure marked since (under attack), and counts right from another key's read", async () => {
      const key = gate.usernameKey("stale-mark@example.com");
      const other = gate.usernameKey("stale-other@example.com");
      const policy = { ...gate.config.lockout, threshold: 1_000, capFailures: 1_000 };
      const now = Date.now();
      await gate.lockouts.admitAttempt(key, now, policy);
      const before = await gate.lockouts.check(key, now, policy);
      await gate.lockouts.markFailed(key, now - 5_000);
      const counted = await gate.lockouts.admitAttempt(key, now, policy, before.seen);
      expect(counted.allowed && counted.lastFailedAtMs).toBe(now - 5_000);
      // Another key's read (a caller's mistake) costs a missed write, never a wrong count: the sixth failure is the sixth.
      for (let i = 0; i < 5; i++) await gate.lockouts.admitAttempt(other, now, policy);
      const elsewhere = await gate.lockouts.admitAttempt(other, now, policy, before.seen);
      expect(elsewhere.allowed && elsewhere.state.failureCount).toBe(6);
    });
  });
}

onEachDatabase("store writes", ({ label, makeDatabase }) => storeWritesSuite(label, makeDatabase));

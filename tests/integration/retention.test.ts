import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { retentionCutoffs, type RetentionPolicy } from "@/lib/retention/policy";
import { capReports, runRetention } from "@/lib/retention/retention";
import { freshPglite, type TestDatabase } from "../helpers/databases";

const DAY = 86_400_000;
const NOW = Date.UTC(2027, 0, 1);
const POLICY: RetentionPolicy = { securityEventMs: 90 * DAY, lockoutIdleMs: DAY, endedSessionMs: 30 * DAY };
const at = (ms: number) => new Date(NOW + ms);

/** The retention pass on a real database, with the clock set rather than waited for. */
describe("retention", () => {
  let database: TestDatabase;
  let prisma: import("@/lib/generated/prisma/client").PrismaClient;
  let close: () => Promise<void>;
  const userId = "11111111-1111-4111-8111-111111111111";

  beforeAll(async () => {
    database = await freshPglite();
    const { openDatabase } = await import("@/lib/db/client");
    const { resolveDatabaseTarget } = await import("@/lib/db/target");
    const db = await openDatabase(resolveDatabaseTarget(database.url));
    prisma = db.prisma;
    close = db.close;
    // The owner of every row below (what an account owns is deleted with it, so it must exist).
    await prisma.user.create({ data: { id: userId, email: "retention@example.com", passwordHash: "x" } });
  });

  afterAll(async () => {
    await close?.();
    await database?.dispose();
  });

  async function seed() {
    const family = (id: string) => `${id}-2222-4222-8222-222222222222`;
    const { id: reportId } = await prisma.report.create({ data: { userId, content: {} } });
    await prisma.downloadToken.createMany({
      data: [
        { tokenHash: "dl-old-1", userId, reportId, expiresAt: at(-DAY) },
        { tokenHash: "dl-old-2", userId, reportId, expiresAt: at(-2 * DAY) },
        { tokenHash: "dl-old-3", userId, reportId, expiresAt: at(-3 * DAY) },
        { tokenHash: "dl-live", userId, reportId, expiresAt: at(DAY) },
      ],
    });
    const token = (
      tokenHash: string,
      familyId: string,
      fields: { expiresAt: Date; familyExpiresAt: Date; rotatedAt?: Date; revokedAt?: Date },
    ) => ({
      tokenHash,
      familyId,
      userId,
      familyCreatedAt: at(-100 * DAY),
      ...fields,
    });
    await prisma.refreshToken.createMany({
      data: [
        token("rt-family-over", family("aaaaaaaa"), { expiresAt: at(-10 * DAY), familyExpiresAt: at(-DAY) }),
        // Expired and rotated, but its family is still live: presented again it is reuse, so it stays.
        token("rt-rotated-in-live-family", family("bbbbbbbb"), {
          expiresAt: at(-DAY),
          familyExpiresAt: at(10 * DAY),
          rotatedAt: at(-2 * DAY),
        }),
        token("rt-revoked-long-ago", family("cccccccc"), {
          expiresAt: at(-40 * DAY),
          familyExpiresAt: at(10 * DAY),
          revokedAt: at(-31 * DAY),
        }),
        token("rt-revoked-recently", family("dddddddd"), { expiresAt: at(DAY), familyExpiresAt: at(10 * DAY), revokedAt: at(-DAY) }),
      ],
    });
    const session = (id: string, fields: { expiresAt: Date; lastSeenAt: Date; revokedAt?: Date }) => ({
      id: id.padEnd(22, "x"),
      userId,
      browser: "Firefox",
      address: "x",
      createdAt: at(-60 * DAY),
      ...fields,
    });
    await prisma.browserSession.createMany({
      data: [
        session("ended", { expiresAt: at(-DAY), lastSeenAt: at(-2 * DAY) }),
        session("live", { expiresAt: at(DAY), lastSeenAt: at(-1000) }),
      ],
    });
    await prisma.signInLockout.createMany({
      data: [
        { usernameKey: "idle-1", failureCount: 3, lastFailureAt: at(-2 * DAY) },
        { usernameKey: "idle-2", failureCount: 100, lastFailureAt: at(-3 * DAY), lockedUntil: at(-2 * DAY) },
        // Locked now, whatever its age: kept.
        { usernameKey: "locked", failureCount: 9, lastFailureAt: at(-2 * DAY), lockedUntil: at(DAY) },
        { usernameKey: "recent", failureCount: 2, lastFailureAt: at(-1000), wrongPasswords: ["live-streak"] },
        // Kept for "under attack"; the fingerprints of its quiet streak go.
        {
          usernameKey: "attacked",
          failureCount: 2,
          lastFailureAt: at(-2 * DAY),
          lastFailedAt: at(-1000),
          wrongPasswords: ["quiet-streak"],
        },
      ],
    });
    await prisma.securityEvent.createMany({
      data: [
        { userId, kind: "sign_in_failed", address: "x", createdAt: at(-91 * DAY) },
        { userId, kind: "sign_in_failed", address: "x", createdAt: at(-89 * DAY) },
      ],
    });
    const pending = (digest: string, expiresAt: Date) => ({
      digest,
      userId,
      purpose: "sign_in",
      channel: "browser",
      step: "second_factor",
      sessionId: "s",
      credentialGeneration: 0,
      route: "/api/auth/callback/credentials",
      address: "x",
      createdAt: at(-DAY),
      expiresAt,
    });
    await prisma.pendingSignIn.createMany({
      data: [pending("expired-1", at(-DAY)), pending("expired-2", at(-1000)), pending("expired-3", at(-500)), pending("live", at(60_000))],
    });
  }

  it("deletes only what can no longer matter, a bounded batch per table per run", async () => {
    await seed();
    const cutoffs = retentionCutoffs(NOW, POLICY);
    const first = await runRetention(prisma, cutoffs, 2);
    expect(first).toEqual({
      downloadTokens: 2,
      refreshTokens: 2,
      browserSessions: 1,
      lockouts: 2,
      wrongPasswords: 1,
      securityEvents: 1,
      emailTokens: 0,
      pendingSignIns: 2,
    });
    const second = await runRetention(prisma, cutoffs, 2);
    expect(second).toEqual({
      downloadTokens: 1,
      refreshTokens: 0,
      browserSessions: 0,
      lockouts: 0,
      wrongPasswords: 0,
      securityEvents: 0,
      emailTokens: 0,
      pendingSignIns: 1,
    });
    expect((await prisma.pendingSignIn.findMany({ select: { digest: true } })).map((row) => row.digest)).toEqual(["live"]);

    expect((await prisma.downloadToken.findMany({ select: { tokenHash: true } })).map((row) => row.tokenHash)).toEqual(["dl-live"]);
    expect(
      (await prisma.refreshToken.findMany({ select: { tokenHash: true }, orderBy: { tokenHash: "asc" } })).map((row) => row.tokenHash),
    ).toEqual(["rt-revoked-recently", "rt-rotated-in-live-family"]);
    expect((await prisma.browserSession.findMany({ select: { id: true } })).map((row) => row.id)).toEqual(["live".padEnd(22, "x")]);
    expect(
      (await prisma.signInLockout.findMany({ select: { usernameKey: true }, orderBy: { usernameKey: "asc" } })).map(
        (row) => row.usernameKey,
      ),
    ).toEqual(["attacked", "locked", "recent"]);
    expect(
      (await prisma.signInLockout.findMany({ select: { wrongPasswords: true }, orderBy: { usernameKey: "asc" } })).map(
        (row) => row.wrongPasswords,
      ),
    ).toEqual([[], [], ["live-streak"]]);
    expect(await prisma.securityEvent.count()).toBe(1);
  });

  it("goes on past a table whose step fails, and says which one failed", async () => {
    await prisma.securityEvent.create({ data: { userId, kind: "sign_in_failed", address: "x", createdAt: at(-100 * DAY) } });
    // The sessions' read fails as a statement past the pool's time-out would.
    const timedOut = Object.assign(new Error("canceling statement due to statement timeout"), { code: "57014" });
    const failing = new Proxy(prisma, {
      get: (target, property, receiver) =>
        property === "browserSession"
          ? { findMany: () => Promise.reject(timedOut), deleteMany: target.browserSession.deleteMany.bind(target.browserSession) }
          : Reflect.get(target, property, receiver),
    });
    const failed: Array<{ table: string; error: unknown }> = [];
    const counts = await runRetention(failing, retentionCutoffs(NOW, POLICY), 10, (table, error) => failed.push({ table, error }));
    expect(failed).toEqual([{ table: "browserSessions", error: timedOut }]);
    expect(counts).toMatchObject({ browserSessions: 0, securityEvents: 1 });
    // Without a handler, the pass still runs every table, then rejects with what failed.
    await prisma.securityEvent.create({ data: { userId, kind: "sign_in_failed", address: "x", createdAt: at(-100 * DAY) } });
    await expect(runRetention(failing, retentionCutoffs(NOW, POLICY), 10)).rejects.toMatchObject({ errors: [timedOut] });
    expect(await prisma.securityEvent.count({ where: { createdAt: { lt: at(-90 * DAY) } } })).toBe(0);
  });

  it("keeps a user's newest reports up to the bound", async () => {
    // Starts from none: the report the download tokens above name is not one of the 25.
    await prisma.report.deleteMany({ where: { userId } });
    for (let i = 0; i < 25; i++) await prisma.report.create({ data: { userId, content: { n: i }, createdAt: at(i * 1000) } });
    expect(await capReports(prisma, userId, 20)).toBe(5);
    const kept = await prisma.report.findMany({ where: { userId }, orderBy: { createdAt: "asc" }, select: { content: true } });
    expect(kept.map((row) => (row.content as { n: number }).n)).toEqual(Array.from({ length: 20 }, (_, i) => i + 5));
    expect(await capReports(prisma, userId, 20)).toBe(0);
  });
});

import type { PrismaClient } from "../generated/prisma/client";
import { admitAttempt, checkLockout, type AttemptDecision, type LockoutCheck, type LockoutPolicy, type LockoutState } from "./rules";

/** An admitted attempt, with when the subject last failed for real (markFailed), which a success does not clear. */
export type AdmittedAttempt =
  (Extract<AttemptDecision, { allowed: true }> & { lastFailedAtMs: number | null }) | Extract<AttemptDecision, { allowed: false }>;

/**
 * Persists lockout state; the decisions stay in rules.ts. A key is a subject's digest: a
 * username as seen from untrusted clients, or one known device.
 */
export interface LockoutRepository {
  check(usernameKey: string, nowMs: number, policy: LockoutPolicy): Promise<LockoutCheck>;
  /**
   * Atomically: refuses while locked, else counts the attempt as a failure (admitAttempt).
   * Concurrent attempts for one username are serialised, so none is missed and none slips past a lock.
   */
  admitAttempt(usernameKey: string, nowMs: number, policy: LockoutPolicy): Promise<AdmittedAttempt>;
  /** Records that a check from an untrusted client failed, or waited for a mailed code (what "under attack" reads). */
  markFailed(usernameKey: string, nowMs: number): Promise<void>;
  /** Clears the streak and the lock; a row that records a real failure keeps that record. */
  reset(usernameKey: string): Promise<void>;
  /** Keys locked at `nowMs` (digests only: the table holds no usernames), longest lock first. */
  listLocked(nowMs: number, limit: number): Promise<{ usernameKey: string; failureCount: number; lockedUntilMs: number }[]>;
}

type Row = { failureCount: number; lastFailureAt: Date; lockedUntil: Date | null; lastFailedAt: Date | null };

function toState(row: Row): LockoutState | null {
  // A freshly inserted placeholder row has no failures yet.
  if (row.failureCount === 0) return null;
  return {
    failureCount: row.failureCount,
    lastFailureAtMs: row.lastFailureAt.getTime(),
    lockedUntilMs: row.lockedUntil?.getTime() ?? null,
  };
}

export function prismaLockoutRepository(prisma: PrismaClient): LockoutRepository {
  return {
    async check(usernameKey, nowMs, policy) {
      const row = await prisma.signInLockout.findUnique({ where: { usernameKey } });
      return checkLockout(row ? toState(row) : null, nowMs, policy);
    },

    async admitAttempt(usernameKey, nowMs, policy) {
      // Check-and-count under a row lock (SELECT … FOR UPDATE): the rule runs in TypeScript,
      // and concurrent failures for one username queue on the lock instead of overwriting
      // each other. The insert makes sure there is a row to lock.
      return prisma.$transaction(
        async (tx) => {
          await tx.$executeRaw`INSERT INTO "SignInLockout" ("usernameKey", "failureCount", "lastFailureAt") VALUES (${usernameKey}, 0, ${new Date(0)}) ON CONFLICT ("usernameKey") DO NOTHING`;
          const rows = await tx.$queryRaw<
            Row[]
          >`SELECT "failureCount", "lastFailureAt", "lockedUntil", "lastFailedAt" FROM "SignInLockout" WHERE "usernameKey" = ${usernameKey} FOR UPDATE`;
          const decision = admitAttempt(rows[0] ? toState(rows[0]) : null, nowMs, policy);
          if (!decision.allowed) return decision;
          const lastFailedAtMs = rows[0]?.lastFailedAt?.getTime() ?? null;
          const next = decision.state;
          await tx.signInLockout.update({
            where: { usernameKey },
            data: {
              failureCount: next.failureCount,
              lastFailureAt: new Date(next.lastFailureAtMs),
              lockedUntil: next.lockedUntilMs === null ? null : new Date(next.lockedUntilMs),
            },
          });
          return { ...decision, lastFailedAtMs };
        },
        // Many parallel failures queue on one row; give them time rather than dropping counts.
        { maxWait: 15_000, timeout: 15_000 },
      );
    },

    async listLocked(nowMs, limit) {
      const rows = await prisma.signInLockout.findMany({
        where: { lockedUntil: { gt: new Date(nowMs) } },
        orderBy: { lockedUntil: "desc" },
        take: limit,
        select: { usernameKey: true, failureCount: true, lockedUntil: true },
      });
      return rows.map((row) => ({
        usernameKey: row.usernameKey,
        failureCount: row.failureCount,
        lockedUntilMs: row.lockedUntil!.getTime(),
      }));
    },

    async markFailed(usernameKey, nowMs) {
      await prisma.signInLockout.updateMany({ where: { usernameKey }, data: { lastFailedAt: new Date(nowMs) } });
    },

    async reset(usernameKey) {
      await prisma.signInLockout.deleteMany({ where: { usernameKey, lastFailedAt: null } });
      await prisma.signInLockout.updateMany({ where: { usernameKey }, data: { failureCount: 0, lockedUntil: null } });
    },
  };
}

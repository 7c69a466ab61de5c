import { AT_RISK_WINDOW_MS } from "@/lib/factors/device-confirmation";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import type { RetentionCutoffs } from "./policy";

export type RetentionCounts = {
  downloadTokens: number;
  refreshTokens: number;
  browserSessions: number;
  lockouts: number;
  wrongPasswords: number;
  securityEvents: number;
  emailTokens: number;
  pendingSignIns: number;
};

/**
 * One bounded pass: at most `batchRows` rows per table, oldest first, so a backlog (a spray of
 * random usernames leaves a lockout row each) is worked off over several runs instead of one long
 * transaction. Only rows that can no longer matter go:
 * - download tokens past their expiry;
 * - refresh tokens whose family has reached its absolute end (before that, even an expired
 *   rotated token must stay: presented again it is reuse, and revokes the family), and revoked
 *   families after `endedBefore`;
 * - browser sessions past their end, or revoked or idle since before `endedBefore`;
 * - lockout rows that lock nothing now and whose last failure is older than the quiet period and
 *   NIST's cap hold (so no streak or cap they record still counts);
 * - the wrong passwords' fingerprints of a lockout row kept past that (for "under attack"): they
 *   live only as long as their streak;
 * - security events older than their retention;
 * - emailed links past their expiry (a used one is dead already; it goes once it expires too);
 * - pending sign-ins past their expiry (5 minutes: used or not, none can finish).
 */
export async function runRetention(
  prisma: PrismaClient,
  cutoffs: RetentionCutoffs,
  batchRows: number,
  onTableFailed?: (table: keyof RetentionCounts, error: unknown) => void,
): Promise<RetentionCounts> {
  const { now, endedBefore } = cutoffs;

  // A table whose step fails (a statement past the pool's time-out) counts 0 and the pass goes on:
  // one table's backlog must not keep every later table from its clean-up.
  const steps: Record<keyof RetentionCounts, () => Promise<number>> = {
    downloadTokens: async () => {
      const ids = await prisma.downloadToken.findMany({
        where: { expiresAt: { lt: now } },
        orderBy: { expiresAt: "asc" },
        take: batchRows,
        select: { id: true },
      });
      return (await prisma.downloadToken.deleteMany({ where: { id: { in: ids.map((row) => row.id) } } })).count;
    },
    refreshTokens: async () => {
      const ids = await prisma.refreshToken.findMany({
        where: { OR: [{ familyExpiresAt: { lt: now } }, { revokedAt: { lt: endedBefore } }] },
        orderBy: { familyExpiresAt: "asc" },
        take: batchRows,
        select: { id: true },
      });
      return (await prisma.refreshToken.deleteMany({ where: { id: { in: ids.map((row) => row.id) } } })).count;
    },
    browserSessions: async () => {
      const ids = await prisma.browserSession.findMany({
        where: { OR: [{ expiresAt: { lt: now } }, { revokedAt: { lt: endedBefore } }, { lastSeenAt: { lt: endedBefore } }] },
        orderBy: { lastSeenAt: "asc" },
        take: batchRows,
        select: { id: true },
      });
      return (await prisma.browserSession.deleteMany({ where: { id: { in: ids.map((row) => row.id) } } })).count;
    },
    lockouts: async () => {
      // A row that says the username was under attack in the last 24 hours stays for the device confirmation.
      const idleLockout = {
        lastFailureAt: { lt: cutoffs.lockoutsIdleBefore },
        AND: [
          { OR: [{ lockedUntil: null }, { lockedUntil: { lt: now } }] },
          { OR: [{ lastFailedAt: null }, { lastFailedAt: { lt: new Date(now.getTime() - AT_RISK_WINDOW_MS) } }] },
        ],
      };
      const keys = await prisma.signInLockout.findMany({
        where: idleLockout,
        orderBy: { lastFailureAt: "asc" },
        take: batchRows,
        select: { usernameKey: true },
      });
      // The condition again in the DELETE: a failure counted since the read keeps its row.
      return (await prisma.signInLockout.deleteMany({ where: { usernameKey: { in: keys.map((row) => row.usernameKey) }, ...idleLockout } }))
        .count;
    },
    wrongPasswords: async () => {
      const stale = { lastFailureAt: { lt: cutoffs.lockoutsIdleBefore }, NOT: { wrongPasswords: { isEmpty: true } } };
      const keys = await prisma.signInLockout.findMany({
        where: stale,
        orderBy: { lastFailureAt: "asc" },
        take: batchRows,
        select: { usernameKey: true },
      });
      // The condition again in the UPDATE: a failure counted since the read keeps its fingerprints.
      return (
        await prisma.signInLockout.updateMany({
          where: { usernameKey: { in: keys.map((row) => row.usernameKey) }, ...stale },
          data: { wrongPasswords: [] },
        })
      ).count;
    },
    securityEvents: async () => {
      const ids = await prisma.securityEvent.findMany({
        where: { createdAt: { lt: cutoffs.securityEventsBefore } },
        orderBy: { createdAt: "asc" },
        take: batchRows,
        select: { id: true },
      });
      return (await prisma.securityEvent.deleteMany({ where: { id: { in: ids.map((row) => row.id) } } })).count;
    },
    emailTokens: async () => {
      const ids = await prisma.emailToken.findMany({
        where: { expiresAt: { lt: now } },
        orderBy: { expiresAt: "asc" },
        take: batchRows,
        select: { id: true },
      });
      return (await prisma.emailToken.deleteMany({ where: { id: { in: ids.map((row) => row.id) } } })).count;
    },
    pendingSignIns: async () => {
      const ids = await prisma.pendingSignIn.findMany({
        where: { expiresAt: { lt: now } },
        orderBy: { expiresAt: "asc" },
        take: batchRows,
        select: { id: true },
      });
      return (await prisma.pendingSignIn.deleteMany({ where: { id: { in: ids.map((row) => row.id) } } })).count;
    },
  };

  const counts = {} as RetentionCounts;
  const failed: unknown[] = [];
  for (const [table, step] of Object.entries(steps) as [keyof RetentionCounts, () => Promise<number>][]) {
    try {
      counts[table] = await step();
    } catch (error) {
      counts[table] = 0;
      if (onTableFailed) onTableFailed(table, error);
      else failed.push(error);
    }
  }
  if (failed.length > 0) throw new AggregateError(failed, `retention: ${failed.length} table(s) failed`);
  return counts;
}

/** Keeps a user's newest `keep` reports and deletes the rest: the per-user bound on report storage. */
export async function capReports(prisma: PrismaClient, userId: string, keep: number): Promise<number> {
  const stale = await prisma.report.findMany({ where: { userId }, orderBy: { createdAt: "desc" }, skip: keep, select: { id: true } });
  if (stale.length === 0) return 0;
  return (await prisma.report.deleteMany({ where: { id: { in: stale.map((row) => row.id) }, userId } })).count;
}

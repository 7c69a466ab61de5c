import { AT_RISK_WINDOW_MS } from "@/lib/factors/device-confirmation";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import type { RetentionCutoffs } from "./policy";

export type RetentionCounts = {
  downloadTokens: number;
  refreshTokens: number;
  browserSessions: number;
  lockouts: number;
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
 * - security events older than their retention;
 * - emailed links past their expiry (a used one is dead already; it goes once it expires too);
 * - pending sign-ins past their expiry (5 minutes: used or not, none can finish).
 */
export async function runRetention(prisma: PrismaClient, cutoffs: RetentionCutoffs, batchRows: number): Promise<RetentionCounts> {
  const { now, endedBefore } = cutoffs;

  const downloadIds = await prisma.downloadToken.findMany({
    where: { expiresAt: { lt: now } },
    orderBy: { expiresAt: "asc" },
    take: batchRows,
    select: { id: true },
  });
  const downloadTokens = (await prisma.downloadToken.deleteMany({ where: { id: { in: downloadIds.map((row) => row.id) } } })).count;

  const refreshIds = await prisma.refreshToken.findMany({
    where: { OR: [{ familyExpiresAt: { lt: now } }, { revokedAt: { lt: endedBefore } }] },
    orderBy: { familyExpiresAt: "asc" },
    take: batchRows,
    select: { id: true },
  });
  const refreshTokens = (await prisma.refreshToken.deleteMany({ where: { id: { in: refreshIds.map((row) => row.id) } } })).count;

  const sessionIds = await prisma.browserSession.findMany({
    where: { OR: [{ expiresAt: { lt: now } }, { revokedAt: { lt: endedBefore } }, { lastSeenAt: { lt: endedBefore } }] },
    orderBy: { lastSeenAt: "asc" },
    take: batchRows,
    select: { id: true },
  });
  const browserSessions = (await prisma.browserSession.deleteMany({ where: { id: { in: sessionIds.map((row) => row.id) } } })).count;

  // A row that says the username was under attack in the last 24 hours stays for the device confirmation.
  const idleLockout = {
    lastFailureAt: { lt: cutoffs.lockoutsIdleBefore },
    AND: [
      { OR: [{ lockedUntil: null }, { lockedUntil: { lt: now } }] },
      { OR: [{ lastFailedAt: null }, { lastFailedAt: { lt: new Date(now.getTime() - AT_RISK_WINDOW_MS) } }] },
    ],
  };
  const lockoutKeys = await prisma.signInLockout.findMany({
    where: idleLockout,
    orderBy: { lastFailureAt: "asc" },
    take: batchRows,
    select: { usernameKey: true },
  });
  // The condition again in the DELETE: a failure counted since the read keeps its row.
  const lockouts = (
    await prisma.signInLockout.deleteMany({ where: { usernameKey: { in: lockoutKeys.map((row) => row.usernameKey) }, ...idleLockout } })
  ).count;

  const eventIds = await prisma.securityEvent.findMany({
    where: { createdAt: { lt: cutoffs.securityEventsBefore } },
    orderBy: { createdAt: "asc" },
    take: batchRows,
    select: { id: true },
  });
  const securityEvents = (await prisma.securityEvent.deleteMany({ where: { id: { in: eventIds.map((row) => row.id) } } })).count;

  const emailIds = await prisma.emailToken.findMany({
    where: { expiresAt: { lt: now } },
    orderBy: { expiresAt: "asc" },
    take: batchRows,
    select: { id: true },
  });
  const emailTokens = (await prisma.emailToken.deleteMany({ where: { id: { in: emailIds.map((row) => row.id) } } })).count;

  const pendingIds = await prisma.pendingSignIn.findMany({
    where: { expiresAt: { lt: now } },
    orderBy: { expiresAt: "asc" },
    take: batchRows,
    select: { id: true },
  });
  const pendingSignIns = (await prisma.pendingSignIn.deleteMany({ where: { id: { in: pendingIds.map((row) => row.id) } } })).count;

  return { downloadTokens, refreshTokens, browserSessions, lockouts, securityEvents, emailTokens, pendingSignIns };
}

/** Keeps a user's newest `keep` reports and deletes the rest: the per-user bound on report storage. */
export async function capReports(prisma: PrismaClient, userId: string, keep: number): Promise<number> {
  const stale = await prisma.report.findMany({ where: { userId }, orderBy: { createdAt: "desc" }, skip: keep, select: { id: true } });
  if (stale.length === 0) return 0;
  return (await prisma.report.deleteMany({ where: { id: { in: stale.map((row) => row.id) }, userId } })).count;
}

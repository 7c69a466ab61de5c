/**
 * Runs in its own process (started by retention.ts): the app's configuration and database are
 * per process, and this drill opens two. Prints one JSON line with the measurements.
 *
 * Database A is the app's own (DATABASE_URL) and never runs the retention job; database B gets
 * the same writes and the retention pass every RETENTION_INTERVAL_MINUTES of simulated time,
 * exactly as lib/retention/job.ts runs it (runRetention with the configured policy and batch).
 */
import { sqlLockoutRepository } from "@/lib/lockout/repository";
import { gatehouse } from "@/lib/app";
import { openDatabase } from "@/lib/db/client";
import { resolveDatabaseTarget } from "@/lib/db/target";
import { prismaSecurityEvents } from "@/lib/events/security-events";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import type { ClientAddress } from "@/lib/http/client-address";
import { retentionPolicy } from "@/lib/retention/job";
import { retentionCutoffs } from "@/lib/retention/policy";
import { runRetention } from "@/lib/retention/retention";

export type RetentionChildInput = { withRetentionUrl: string; days: number; attemptsPerDay: number; burstMs: number; limitMs: number };

export type TableCounts = {
  signInLockout: number;
  refreshToken: number;
  downloadToken: number;
  securityEvent: number;
  report: number;
  lockoutTableBytes: number;
};

export type RetentionSample = { day: number; moment: "after the spray" | "end of day"; without: TableCounts; with: TableCounts };

export type RetentionChildOutput = {
  samples: RetentionSample[];
  /** Opening (and migrating) both databases and building the app's layers. */
  setupMs: number;
  daysDone: number;
  retentionRuns: number;
  deletedLockouts: number;
  slowestRunMs: number;
  elapsedMs: number;
  writesPerSecond: number;
  settings: { lockoutIdleHours: number; intervalMinutes: number; batchRows: number };
};

const DAY_MS = 86_400_000;
const START_MS = Date.UTC(2027, 0, 4);

async function counts(prisma: PrismaClient): Promise<TableCounts> {
  const [signInLockout, refreshToken, downloadToken, securityEvent, report, size] = await Promise.all([
    prisma.signInLockout.count(),
    prisma.refreshToken.count(),
    prisma.downloadToken.count(),
    prisma.securityEvent.count(),
    prisma.report.count(),
    prisma.$queryRawUnsafe<{ bytes: bigint }[]>(`SELECT pg_total_relation_size('"SignInLockout"') AS bytes`),
  ]);
  return { signInLockout, refreshToken, downloadToken, securityEvent, report, lockoutTableBytes: Number(size[0]!.bytes) };
}

async function main(input: RetentionChildInput): Promise<RetentionChildOutput> {
  const setupStartedMs = performance.now();
  const gate = await gatehouse();
  const without = gate.prisma;
  const withDb = await openDatabase(resolveDatabaseTarget(input.withRetentionUrl));
  const withPrisma = withDb.prisma;
  const policy = retentionPolicy(gate.config);
  const intervalMs = gate.config.retention.intervalMs;
  const batchRows = gate.config.retention.batchRows;
  let now = START_MS;
  const clock = () => now;
  const setupMs = performance.now() - setupStartedMs;
  const startedMs = performance.now();
  // The two writes a failed sign-in of an unknown username makes (lib/auth/sign-in.ts), on each database.
  const targets = [
    { lockouts: gate.lockouts, events: gate.events },
    { lockouts: sqlLockoutRepository(withDb.sql), events: prismaSecurityEvents(withPrisma, withDb.sql, clock, () => {}) },
  ];
  let nextRetentionMs = START_MS + 60_000;
  let retentionRuns = 0;
  let deletedLockouts = 0;
  let slowestRunMs = 0;
  let writes = 0;
  const retentionUntil = async (untilMs: number) => {
    while (nextRetentionMs <= untilMs) {
      now = nextRetentionMs;
      const runStartedMs = performance.now();
      const deleted = await runRetention(withPrisma, retentionCutoffs(now, policy), batchRows);
      slowestRunMs = Math.max(slowestRunMs, performance.now() - runStartedMs);
      deletedLockouts += deleted.lockouts;
      retentionRuns++;
      nextRetentionMs += intervalMs;
    }
  };

  const samples: RetentionSample[] = [];
  let daysDone = 0;
  for (let day = 0; day < input.days; day++) {
    if (performance.now() - startedMs > input.limitMs) break;
    const dayStartMs = START_MS + day * DAY_MS;
    for (let i = 0; i < input.attemptsPerDay; i++) {
      const atMs = dayStartMs + Math.floor((i * input.burstMs) / input.attemptsPerDay);
      await retentionUntil(atMs);
      now = atMs;
      // A random username from a fresh address: one attempt each, below every limit.
      const email = `spray-${day}-${i}-${Math.random().toString(36).slice(2, 10)}@example.com`;
      const client: ClientAddress = { address: `10.${day}.${i >> 8}.${i & 255}`, key: `bench-${day}-${i}`, source: "forwarded" };
      const key = gate.usernameKey(email);
      for (const target of targets) {
        const attempt = await target.lockouts.admitAttempt(key, now, gate.config.lockout);
        if (attempt.allowed) await target.events.signInFailed(email, client, attempt.state);
        writes++;
      }
    }
    samples.push({ day: day + 1, moment: "after the spray", without: await counts(without), with: await counts(withPrisma) });
    await retentionUntil(dayStartMs + DAY_MS - 1);
    samples.push({ day: day + 1, moment: "end of day", without: await counts(without), with: await counts(withPrisma) });
    daysDone++;
  }
  const elapsedMs = performance.now() - startedMs;
  await withDb.close();
  await gate.close();
  await gate.close();
  return {
    samples,
    setupMs,
    daysDone,
    retentionRuns,
    deletedLockouts,
    slowestRunMs,
    elapsedMs,
    writesPerSecond: writes / (elapsedMs / 1000),
    settings: { lockoutIdleHours: policy.lockoutIdleMs / 3_600_000, intervalMinutes: gate.config.retention.intervalMs / 60_000, batchRows },
  };
}

main(JSON.parse(process.argv[2]!) as RetentionChildInput).then(
  (output) => {
    console.log(JSON.stringify(output));
    process.exit(0);
  },
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);

import type { AppConfig } from "@/lib/config/env";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { startPeriodic } from "@/lib/jobs/jobs";
import type { Logger } from "@/lib/log/logger";
import { retentionCutoffs, type RetentionPolicy } from "./policy";
import { runRetention } from "./retention";
import { messageOf } from "@/lib/log/message";

// Ended sessions and revoked families stay this long for the account page, then go.
const ENDED_SESSION_KEEP_MS = 30 * 86_400_000;

export function retentionPolicy(config: AppConfig): RetentionPolicy {
  return {
    securityEventMs: config.retention.securityEventMs,
    // Past both, a lockout row records no streak (quiet period) and no cap (cap hold) that still counts.
    lockoutIdleMs: Math.max(config.lockout.quietPeriodMs, config.lockout.capHoldMs ?? 0),
    endedSessionMs: ENDED_SESSION_KEEP_MS,
  };
}

/**
 * Runs the retention pass every RETENTION_INTERVAL_MINUTES (the first one a minute after start).
 * Housekeeping: a failed run is a warning and the next one tries again. Every instance runs it;
 * the deletes are idempotent. Returns stop(), which waits for a run in progress.
 */
export function startRetention(prisma: PrismaClient, config: AppConfig, clock: () => number, log: Logger): { stop(): Promise<void> } {
  const policy = retentionPolicy(config);
  return startPeriodic(
    async () => {
      const counts = await runRetention(prisma, retentionCutoffs(clock(), policy), config.retention.batchRows, (table, error) =>
        log.warn({ event: "retention_failed", table, err: messageOf(error) }),
      );
      if (Object.values(counts).some((count) => count > 0)) log.info({ event: "retention_run", ...counts });
    },
    {
      intervalMs: config.retention.intervalMs,
      firstAfterMs: 60_000,
      onError: (error) => log.warn({ event: "retention_failed", err: messageOf(error) }),
    },
  );
}

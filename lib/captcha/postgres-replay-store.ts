import { deleteExpired } from "@/lib/db/expired-rows";
import { SERVER_NOW_UTC, utcTimestamp } from "@/lib/db/sql-time";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { startPeriodic } from "@/lib/jobs/jobs";
import type { ReplayStore } from "./replay-store";

export type PostgresReplayStore = ReplayStore & {
  /** Deletes expired AltchaReplay rows; returns how many. */
  cleanupExpired(): Promise<number>;
  /** Stops the clean-up timer and waits for a clean-up in progress; the Prisma client stays open. */
  close(): Promise<void>;
};

/**
 * Spent challenges in the AltchaReplay table, shared by every instance. One INSERT … ON CONFLICT is
 * the atomic check-and-set: a returned row means this call claimed the id. A row whose challenge has
 * expired may be claimed again; this store deletes expired rows every `cleanupIntervalMs`.
 */
export function postgresReplayStore(
  prisma: PrismaClient,
  options: { cleanupIntervalMs?: number; onCleanupError?: (error: unknown) => void } = {},
): PostgresReplayStore {
  const cleanupExpired = () => deleteExpired(prisma, "AltchaReplay");
  const cleanup = startPeriodic(async () => void (await cleanupExpired()), {
    intervalMs: options.cleanupIntervalMs ?? 60_000,
    onError: options.onCleanupError ?? (() => {}),
  });
  return {
    kind: "postgres",
    async claim(id, expiresAtMs, nowMs) {
      if (expiresAtMs <= nowMs) return false;
      // An old row is reclaimable only once expired by both the database's clock and the caller's:
      // the caller checked the challenge's expiry on its own clock, so a database clock running ahead
      // must not free a spent id while callers still accept its challenge.
      const rows = await prisma.$queryRaw<{ id: string }[]>`
        INSERT INTO "AltchaReplay" ("id", "expiresAt") VALUES (${id}, ${utcTimestamp(expiresAtMs)})
        ON CONFLICT ("id") DO UPDATE SET "expiresAt" = EXCLUDED."expiresAt"
        WHERE "AltchaReplay"."expiresAt" <= LEAST(${SERVER_NOW_UTC}, ${utcTimestamp(nowMs)})
        RETURNING "id"`;
      return rows.length === 1;
    },
    cleanupExpired,
    close: () => cleanup.stop(),
  };
}

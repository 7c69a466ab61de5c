import type { PrismaClient } from "@/lib/generated/prisma/client";
import { SERVER_NOW_UTC, utcTimestamp } from "@/lib/rate-limit/stores/postgres";
import type { ReplayStore } from "./replay-store";

/**
 * Spent challenges in the AltchaReplay table, shared by every instance. One INSERT … ON CONFLICT is
 * the atomic check-and-set: a returned row means this call claimed the id. A row whose challenge has
 * expired may be claimed again; expired rows are deleted by the PostgreSQL rate-limit store's clean-up.
 */
export function postgresReplayStore(prisma: PrismaClient): ReplayStore {
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
  };
}

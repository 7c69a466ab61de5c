import { NOW_UTC } from "@/lib/db/sql";
import { Prisma } from "@/lib/generated/prisma/client";

/**
 * The database's clock as a UTC `timestamp` (the columns are `timestamp(3)` without time zone
 * holding UTC, as Prisma writes them). AT TIME ZONE 'UTC' makes it independent of the session's TimeZone.
 */
export const SERVER_NOW_UTC = Prisma.raw(NOW_UTC);

/** Whole ms since the epoch as a UTC `timestamp`, exact (integer interval arithmetic, no float seconds). */
export function utcTimestamp(epochMs: number): Prisma.Sql {
  return Prisma.sql`(TIMESTAMP 'epoch' + ${epochMs}::bigint * INTERVAL '1 millisecond')`;
}

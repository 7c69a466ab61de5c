import { msToUtc, NOW_UTC } from "@/lib/db/sql";
import { Prisma } from "@/lib/generated/prisma/client";

/**
 * The database's clock as a UTC `timestamp` (the columns are `timestamp(3)` without time zone
 * holding UTC, as Prisma writes them). AT TIME ZONE 'UTC' makes it independent of the session's TimeZone.
 */
export const SERVER_NOW_UTC = Prisma.raw(NOW_UTC);

// msToUtc's text around its parameter, so that the Sql path and Prisma's write one expression.
const MS_PARTS = msToUtc("\u0000").split("\u0000");
if (MS_PARTS.length !== 2) throw new Error("msToUtc must name its parameter exactly once");
const [BEFORE_MS, AFTER_MS] = MS_PARTS as [string, string];

/** Whole ms since the epoch as a UTC `timestamp`, exact (integer interval arithmetic, no float seconds). */
export function utcTimestamp(epochMs: number): Prisma.Sql {
  return new Prisma.Sql([BEFORE_MS, AFTER_MS], [epochMs]);
}

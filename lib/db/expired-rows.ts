import { SERVER_NOW_UTC } from "@/lib/db/sql-time";
import { Prisma, type PrismaClient } from "@/lib/generated/prisma/client";

/** The tables that expire their rows by "expiresAt" (indexed), and each one's key column. */
const EXPIRING = { RateLimitBucket: "key", AltchaReplay: "id" } as const;

/**
 * Rows one statement deletes, and statements one pass sends: each statement stays short whatever
 * the backlog (the PostgreSQL pool ends a statement after 10 s, lib/db/client.ts), and a pass ends
 * even while a flood expires rows as fast as it deletes them; the next pass goes on.
 */
export const EXPIRED_BATCH = { rows: 5_000, statements: 100 } as const;

/**
 * Deletes a table's rows expired by the database's clock, oldest first, a batch per statement until
 * a batch comes back short. SKIP LOCKED: two instances sweeping at once share the work. Returns how
 * many rows went.
 */
export async function deleteExpired(
  prisma: PrismaClient,
  table: keyof typeof EXPIRING,
  batch: { rows: number; statements: number } = EXPIRED_BATCH,
): Promise<number> {
  const name = Prisma.raw(`"${table}"`);
  const key = Prisma.raw(`"${EXPIRING[table]}"`);
  let deleted = 0;
  for (let statement = 0; statement < batch.statements; statement++) {
    const [row] = await prisma.$queryRaw<{ deleted: bigint }[]>`
      WITH doomed AS (
        SELECT ${key} AS "doomed" FROM ${name} WHERE "expiresAt" <= ${SERVER_NOW_UTC}
         ORDER BY "expiresAt" LIMIT ${batch.rows} FOR UPDATE SKIP LOCKED),
      gone AS (DELETE FROM ${name} WHERE ${key} IN (SELECT "doomed" FROM doomed) RETURNING 1)
      SELECT count(*) AS "deleted" FROM gone`;
    const rows = Number(row?.deleted ?? 0);
    deleted += rows;
    if (rows < batch.rows) break;
  }
  return deleted;
}

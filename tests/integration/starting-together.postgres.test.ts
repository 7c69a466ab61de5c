import { describe, expect, it } from "vitest";
import { openDatabase, type Database } from "@/lib/db/client";
import { freshPostgres, postgresUrl } from "../helpers/databases";

const url = postgresUrl();

const INSTANCES = 4;
const ROUNDS = 10;
/** One round's bound: a start that waits on another forever fails the drill instead of hanging it. */
const ROUND_TIMEOUT_MS = 60_000;

function bounded<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Issue 59: two instances started together on an empty database failed one start in four with
 * `duplicate key value violates unique constraint "pg_type_typname_nsp_index"`: both created the
 * migrations' bookkeeping table before either held the advisory lock. Each instance here opens
 * the database as the app does at start (its own migration connection, then its pool).
 */
describe.skipIf(!url)("instances started together on an empty PostgreSQL database (needs TEST_DATABASE_URL)", () => {
  it(
    `${INSTANCES} at once, ${ROUNDS} times: every one comes up, and each migration is recorded once`,
    { timeout: ROUNDS * ROUND_TIMEOUT_MS },
    async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const database = await freshPostgres(url!);
        const opened: Database[] = [];
        try {
          const starts = await bounded(
            Promise.allSettled(
              Array.from({ length: INSTANCES }, async () => {
                const db = await openDatabase({ kind: "postgres", url: database.url });
                opened.push(db);
                return db;
              }),
            ),
            ROUND_TIMEOUT_MS,
            `round ${round + 1}`,
          );
          const failures = starts.flatMap((start) => (start.status === "rejected" ? [String(start.reason)] : []));
          expect(failures, `round ${round + 1}`).toEqual([]);
          const repeated = await opened[0]!.sql.rows<{ name: string; n: number }>(
            `SELECT migration_name AS name, count(*)::int AS n FROM "_prisma_migrations" GROUP BY migration_name HAVING count(*) > 1`,
            [],
          );
          expect(repeated).toEqual([]);
        } finally {
          await Promise.all(opened.map((db) => db.close()));
          await database.dispose();
        }
      }
    },
  );
});

import type { PGlite } from "@electric-sql/pglite";
import { amcheck } from "@electric-sql/pglite/contrib/amcheck";
import { messageOf } from "@/lib/log/message";

/**
 * PostgreSQL's amcheck on a PGlite database: `bt_index_check` on every B-tree index and
 * `verify_heapam` on every table. A backup whose index page is damaged still opens and answers
 * `SELECT count(*)`, then fails every sign-in that uses the index ("invalid page in block 3"):
 * only a check of every page finds it before users do.
 */

/** Pass to PGlite.create so the check can run. */
export const INTEGRITY_EXTENSIONS = { amcheck };

export type IntegrityProblem = { relation: string; kind: "index" | "table"; detail: string };

type Relation = { oid: number; name: string };

export async function checkIntegrity(db: PGlite): Promise<IntegrityProblem[]> {
  const created = (await db.query<{ present: boolean }>(`SELECT count(*) = 0 AS present FROM pg_extension WHERE extname = 'amcheck'`))
    .rows[0]?.present;
  await db.exec(`CREATE EXTENSION IF NOT EXISTS amcheck`);
  const problems: IntegrityProblem[] = [];
  try {
    // Every schema but the temporary ones: the catalogue's own tables and indexes too.
    const tables = await db.query<Relation>(
      `SELECT c.oid::int AS oid, format('%I.%I', n.nspname, c.relname) AS name
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relkind IN ('r', 'm', 't') AND c.relpersistence = 'p' ORDER BY 2`,
    );
    for (const table of tables.rows) {
      try {
        const { rows } = await db.query<{ blkno: number; msg: string }>(`SELECT blkno, msg FROM verify_heapam($1::oid::regclass) LIMIT 3`, [
          table.oid,
        ]);
        for (const row of rows) problems.push({ relation: table.name, kind: "table", detail: `block ${row.blkno}: ${row.msg}` });
      } catch (error) {
        problems.push({ relation: table.name, kind: "table", detail: firstLineOf(error) });
      }
    }
    const indexes = await db.query<Relation>(
      `SELECT c.oid::int AS oid, format('%I.%I', n.nspname, c.relname) AS name
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_am am ON am.oid = c.relam
        WHERE am.amname = 'btree' AND c.relpersistence = 'p' AND i.indisvalid AND i.indisready ORDER BY 2`,
    );
    for (const index of indexes.rows) {
      try {
        // heapallindexed: every table row has its index entry, not only that the pages are sane.
        await db.query(`SELECT bt_index_check($1::oid::regclass, true)`, [index.oid]);
      } catch (error) {
        problems.push({ relation: index.name, kind: "index", detail: firstLineOf(error) });
      }
    }
  } finally {
    // Leave the database as it was: the extension was only needed for the check.
    if (created) await db.exec(`DROP EXTENSION IF EXISTS amcheck`).catch(() => {});
  }
  return problems;
}

function firstLineOf(error: unknown): string {
  return messageOf(error).split("\n")[0]!.slice(0, 200);
}

/** One line per damaged relation, for a refusal message. */
export function describeProblems(problems: IntegrityProblem[]): string {
  return problems.map((problem) => `${problem.kind} ${problem.relation}: ${problem.detail}`).join("; ");
}

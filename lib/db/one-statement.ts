import type { Sql, SqlValue } from "./sql";

/** Adds a value to the statement's parameters and answers its placeholder (`$n`). */
export type Param = (value: SqlValue) => string;

/**
 * Data-modifying statements (INSERT, UPDATE or DELETE, none with a WITH of its own) that a store
 * builds for its own table, their values passed through `param`, each written to change nothing
 * unless `when` holds: an SQL condition in its WHERE (an INSERT as `INSERT … SELECT … WHERE`).
 * `when` is `TRUE` unless the writes are guarded (`writeGuarded`). A store runs them alone
 * (`oneStatement(writes)`), or a caller runs several stores' together.
 */
export type Writes = (param: Param, when: string) => readonly string[];

/**
 * The row guarded writes depend on: a SELECT of it ending `FOR SHARE`. They change nothing unless
 * it is found, and nothing else may change or delete it until they commit (one that was changing
 * it first is waited for and then seen), so whatever changes it lands wholly before them or
 * wholly after them.
 */
export type Guard = (param: Param) => string;

/** The condition every guarded write carries: the guard found its row. */
const GUARD_FOUND = `EXISTS (SELECT 1 FROM "guard")`;

function statementOf(guard: Guard | null, writes: Writes[]): { text: string; values: SqlValue[] } {
  const values: SqlValue[] = [];
  const param: Param = (value) => {
    values.push(value);
    return `$${values.length}`;
  };
  const guardText = guard ? guard(param) : null;
  const when = guard ? GUARD_FOUND : "TRUE";
  const statements = writes.flatMap((write) => write(param, when));
  if (statements.length === 0) throw new Error("oneStatement: nothing to write");
  // A write that left out its condition would happen without the row it depends on.
  if (guard && !statements.every((text) => text.includes(GUARD_FOUND))) throw new Error("oneStatement: a write ignores its guard");
  if (guardText === null && statements.length === 1) return { text: statements[0]!, values };
  const ctes = statements.map((text, n) => `w${n} AS (${text})`);
  // MATERIALIZED: the guard runs once, and so locks once, whatever reads it.
  if (guardText !== null)
    return { text: `WITH "guard" AS MATERIALIZED (${guardText}),\n${ctes.join(",\n")}\nSELECT ${GUARD_FOUND} AS "found"`, values };
  return { text: `WITH ${ctes.join(",\n")}\nSELECT 1`, values };
}

/**
 * Several writes as one statement, so one round trip and one transaction: each becomes a
 * data-modifying CTE, which PostgreSQL runs exactly once and to the end whether or not anything
 * reads it, and every one of them sees the tables as they were before the statement (a DELETE
 * does not see an INSERT beside it). Either all of them happen or none does. Two writes must not
 * change the same row.
 */
export function oneStatement(...writes: Writes[]): { text: string; values: SqlValue[] } {
  return statementOf(null, writes);
}

/** `oneStatement`, whose writes change nothing unless `guard` finds its row; its one row says whether it did. */
export function guardedStatement(guard: Guard, ...writes: Writes[]): { text: string; values: SqlValue[] } {
  return statementOf(guard, writes);
}

/** Writes of one store or several, as one statement (`oneStatement`) on `sql`. */
export async function writeTogether(sql: Sql, ...writes: Writes[]): Promise<void> {
  const { text, values } = oneStatement(...writes);
  await sql.run(text, values);
}

/** Writes as one statement that changes nothing unless `guard` finds its row: whether it did (and so they were written). */
export async function writeGuarded(sql: Sql, guard: Guard, ...writes: Writes[]): Promise<boolean> {
  const { text, values } = guardedStatement(guard, ...writes);
  const [row] = await sql.rows<{ found: boolean }>(text, values);
  return row?.found === true;
}

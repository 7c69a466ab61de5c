import type { Sql, SqlValue } from "./sql";

/** Adds a value to the statement's parameters and answers its placeholder (`$n`). */
export type Param = (value: SqlValue) => string;

/**
 * Data-modifying statements (INSERT, UPDATE or DELETE, none with a WITH of its own) that a store
 * builds for its own table, their values passed through `param`. A store runs them alone
 * (`oneStatement(writes)`), or a caller runs several stores' together.
 */
export type Writes = (param: Param) => readonly string[];

/**
 * Several writes as one statement, so one round trip and one transaction: each becomes a
 * data-modifying CTE, which PostgreSQL runs exactly once and to the end whether or not anything
 * reads it, and every one of them sees the tables as they were before the statement (a DELETE
 * does not see an INSERT beside it). Either all of them happen or none does. Two writes must not
 * change the same row.
 */
export function oneStatement(...writes: Writes[]): { text: string; values: SqlValue[] } {
  const values: SqlValue[] = [];
  const param: Param = (value) => {
    values.push(value);
    return `$${values.length}`;
  };
  const statements = writes.flatMap((write) => write(param));
  if (statements.length === 0) throw new Error("oneStatement: nothing to write");
  if (statements.length === 1) return { text: statements[0]!, values };
  const ctes = statements.map((text, n) => `w${n} AS (${text})`);
  return { text: `WITH ${ctes.join(",\n")}\nSELECT 1`, values };
}

/** Writes of one store or several, as one statement (`oneStatement`) on `sql`. */
export async function writeTogether(sql: Sql, ...writes: Writes[]): Promise<void> {
  const { text, values } = oneStatement(...writes);
  await sql.run(text, values);
}

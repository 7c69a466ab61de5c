import { createHash } from "node:crypto";
import type { PGlite } from "@electric-sql/pglite";
import type pg from "pg";

/**
 * What a statement may be given: values both drivers send as text, with no conversion of their
 * own. A time goes as whole ms since the epoch, turned into a timestamp in the SQL (`msToUtc`).
 */
export type SqlValue = string | number | boolean | null;

/**
 * Statements straight to the driver, for the stores on every sign-in's path. Prisma 6.19 compiles
 * each query to a plan (no cache) and converts its rows: about 0.5–1 ms a statement on top of
 * PGlite's 0.1–0.3 ms (docs/decisions/0015-sign-in-stores-speak-sql.md). Same connections as
 * Prisma's (PGlite's one; the same pool), so what one writes the other reads at once.
 *
 * A row's columns are read as text, int4, float8 and bool only, which both drivers parse alike; a
 * time comes back as ms since the epoch (`utcToMs`), never as a Date a driver reads in a zone.
 */
export interface Sql {
  /**
   * One statement on its own (autocommit). Never transaction control or a session setting: on
   * PostgreSQL each statement may take another pooled connection, and on PGlite a BEGIN here
   * would take every other request's statements into it. A transaction is Prisma's.
   */
  rows<T>(text: string, values?: readonly SqlValue[]): Promise<T[]>;
  /** Rows the statement changed. */
  run(text: string, values?: readonly SqlValue[]): Promise<number>;
}

/** The database's clock as a UTC `timestamp`, whatever the session's TimeZone (sql-time.ts's too). */
export const NOW_UTC = "(clock_timestamp() AT TIME ZONE 'UTC')";

/** `timestamp(3)` (UTC, as Prisma writes them) from the `$n` parameter holding whole ms since the epoch. */
export const msToUtc = (parameter: string) => `(TIMESTAMP 'epoch' + ${parameter}::bigint * INTERVAL '1 millisecond')`;

/**
 * Whole ms since the epoch (float8) from a UTC `timestamp(3)` column; null stays null. Rounded:
 * before PostgreSQL 14 extract() gave float8 seconds, whose ms are not always whole.
 */
export const utcToMs = (column: string) => `round(extract(epoch FROM ${column}) * 1000)::float8`;

// Transaction control and session settings (see Sql).
const SESSION_STATEMENT = /^\s*(begin|start|commit|end|rollback|abort|savepoint|release|prepare|set|reset|discard)\b/i;

function statement(text: string): string {
  if (SESSION_STATEMENT.test(text)) throw new Error("Sql: transaction control and session settings belong to Prisma, not to Sql");
  return text;
}

/**
 * PGlite's errors carry the statement and its parameters (a session id, an email, a password
 * hash), which a log line that took the whole error would write out; the code and message stay.
 */
function withoutParameters(error: unknown): never {
  if (error && typeof error === "object") {
    delete (error as { params?: unknown }).params;
    delete (error as { query?: unknown }).query;
  }
  throw error;
}

export function pgliteSql(db: PGlite): Sql {
  return {
    rows: async <T>(text: string, values: readonly SqlValue[] = []) =>
      (await db.query<T>(statement(text), [...values]).catch(withoutParameters)).rows,
    run: async (text, values = []) => (await db.query(statement(text), [...values]).catch(withoutParameters)).affectedRows ?? 0,
  };
}

/** More distinct texts than the code has statements would mean one is built with a value in it. */
const PREPARED_MAX = 200;

/**
 * On PostgreSQL each text is a named statement, prepared once on each pooled connection and then
 * only bound and run: PostgreSQL's parse and plan were most of a sign-in statement's time (issue 28:
 * 128–530 µs unnamed, 51–194 µs named, the four of a known device's sign-in). The texts are the
 * code's own, values always parameters, so they are few; past PREPARED_MAX, a text goes unnamed.
 * A pooler in front of PostgreSQL must keep named statements (PgBouncer 1.21 and later with
 * `max_prepared_statements`; docs/deployment.md).
 */
export function poolSql(pool: pg.Pool): Sql {
  const names = new Map<string, string>();
  const query = (text: string, values: readonly SqlValue[]) => {
    let name = names.get(statement(text));
    // Named by the text itself, so that whatever else names statements on the pool agrees.
    if (name === undefined && names.size < PREPARED_MAX)
      names.set(text, (name = `gatehouse_${createHash("sha256").update(text).digest("hex").slice(0, 32)}`));
    return pool.query({ name, text, values: [...values] });
  };
  return {
    rows: async <T>(text: string, values: readonly SqlValue[] = []) => (await query(text, values)).rows as T[],
    run: async (text, values = []) => (await query(text, values)).rowCount ?? 0,
  };
}

import { createHash } from "node:crypto";
import { parse, protocol, type PGlite, type Results } from "@electric-sql/pglite";
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
   * would take every other request's statements into it. A transaction is Prisma's. The one
   * setting a statement may make is its own transaction's, LEASE_COMMIT.
   */
  rows<T>(text: string, values?: readonly SqlValue[]): Promise<T[]>;
  /** Rows the statement changed. */
  run(text: string, values?: readonly SqlValue[]): Promise<number>;
}

/**
 * A row source, for `FROM`, that makes the statement's own commit skip the wait for the WAL flush
 * (`synchronous_commit` off, local to the statement's transaction, which a statement of Sql's is
 * alone): about 0.5–1 ms a commit on PostgreSQL (issue 28). Everything the statement writes commits
 * so, so it writes only a lease: a row that lapses by itself, whose loss in a crash of the database
 * does little harm (record 18); never a count, a session or an event, and never in `writeTogether`
 * or a transaction. The function is volatile, so its one row is made before the join can write.
 */
export const LEASE_COMMIT = `(SELECT set_config('synchronous_commit', 'off', true)) AS "leaseCommit"`;

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
// A setting made inside a statement: only LEASE_COMMIT's, local to that statement's transaction.
const SETTING_IN_STATEMENT = /set_config"?\s*\(/i;

function statement(text: string): string {
  if (SESSION_STATEMENT.test(text)) throw new Error("Sql: transaction control and session settings belong to Prisma, not to Sql");
  if (SETTING_IN_STATEMENT.test(text) && SETTING_IN_STATEMENT.test(text.replace(LEASE_COMMIT, ""))) {
    throw new Error("Sql: a statement sets nothing but LEASE_COMMIT's");
  }
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

/** More distinct texts than the code has statements would mean one is built with a value in it. */
const PREPARED_MAX = 200;

/**
 * Sql as the drivers make it: also counts the statements run unprepared because PREPARED_MAX texts
 * were already known, which an operator alerts on (gatehouse_sql_unprepared_statements_total). The
 * count, never the text: a text past the limit may hold a value.
 */
export type PreparingSql = Sql & { unpreparedStatements(): number };

/** Named by the text itself, so that whatever else names statements on a connection agrees. */
const statementName = (text: string) => `gatehouse_${createHash("sha256").update(text).digest("hex").slice(0, 32)}`;

/**
 * Failures that come at Bind, before anything runs, and that a statement prepared again answers:
 * "prepared statement does not exist" (something ran DEALLOCATE), and "cached plan must not change
 * result type" (a column's type changed under it). The latter is told by the server function that
 * raises it, not by its message, which lc_messages may translate.
 */
const droppedStatement = (error: unknown) => (error as { code?: string }).code === "26000";
const retypedStatement = (error: unknown) => {
  const { code, routine } = error as { code?: string; routine?: string };
  return code === "0A000" && routine === "RevalidateCachedQuery";
};
const worthPreparingAgain = (error: unknown) => droppedStatement(error) || retypedStatement(error);

type Prepared = { name: string; parameterTypes: number[] };

/**
 * On PGlite each text is a named statement, parsed, planned and described once; a run is then
 * one call into the WebAssembly (Bind, Describe, Execute, Sync together). `PGlite.query` parses
 * and plans every time and calls in six times: 400–530 µs against 70–95 µs a statement here, on
 * the thread every request shares (issue 28). A statement, with its prepare when it is new, runs
 * in one hold of PGlite's two locks, taken as `query` takes them: it never lands inside another
 * caller's statement or transaction, and a `close()` asked for after it waits for all of it.
 * Past PREPARED_MAX texts, a new text goes through `query`.
 */
export function pgliteSql(db: PGlite): PreparingSql {
  const { serialize } = protocol;
  // By text; null while its first run waits for the locks. A failed prepare is forgotten.
  const known = new Map<string, Prepared | null>();
  let unprepared = 0;

  const send = (messages: readonly Uint8Array[]) => db.execProtocolStream(Buffer.concat(messages));

  const prepare = async (text: string): Promise<Prepared> => {
    const name = statementName(text);
    // Closing first makes it idempotent: a statement of that name left by an earlier prepare goes.
    const described = await send([
      serialize.close({ type: "S", name }),
      serialize.parse({ name, text }),
      serialize.describe({ type: "S", name }),
      serialize.sync(),
    ]).catch((error: unknown) => {
      known.delete(text);
      throw error;
    });
    const statement = { name, parameterTypes: parse.parseDescribeStatementResults(described) };
    known.set(text, statement);
    return statement;
  };

  const execute = async ({ name, parameterTypes }: Prepared, values: readonly SqlValue[]): Promise<Results> => {
    // As `query` does: null and undefined as NULL, each value through the serializer of the type
    // PostgreSQL inferred for it.
    const bound = values.map((value, index) => {
      if (value === null || value === undefined) return null;
      const type = parameterTypes[index];
      const serializer = type === undefined ? undefined : db.serializers[type];
      return serializer ? serializer(value) : value.toString();
    });
    const messages = await send([
      serialize.bind({ statement: name, values: bound }),
      serialize.describe({ type: "P" }),
      serialize.execute({}),
      serialize.sync(),
    ]);
    return parse.parseResults(messages, db.parsers)[0]!;
  };

  const query = async (text: string, values: readonly SqlValue[]): Promise<Results> => {
    await db._checkReady();
    // A text is checked when it is new: one known has passed.
    if (!known.has(text)) {
      statement(text);
      if (known.size >= PREPARED_MAX) return (unprepared++, db.query(text, [...values]));
      known.set(text, null);
    }
    return db._runExclusiveTransaction(() =>
      db._runExclusiveQuery(async () => {
        const prepared = known.get(text) ?? (await prepare(text));
        try {
          return await execute(prepared, values);
        } catch (error) {
          if (!worthPreparingAgain(error)) throw error;
          return execute(await prepare(text), values);
        }
      }),
    );
  };

  return {
    rows: async <T>(text: string, values: readonly SqlValue[] = []) => (await query(text, values).catch(withoutParameters)).rows as T[],
    run: async (text, values = []) => (await query(text, values).catch(withoutParameters)).affectedRows ?? 0,
    unpreparedStatements: () => unprepared,
  };
}

/**
 * On PostgreSQL each text is a named statement, prepared once on each pooled connection and then
 * only bound and run: PostgreSQL's parse and plan were most of a sign-in statement's time (issue 28:
 * 128–530 µs unnamed, 51–194 µs named, the four of a known device's sign-in). The texts are the
 * code's own, values always parameters, so they are few; past PREPARED_MAX, a text goes unnamed.
 * A pooler in front of PostgreSQL must keep named statements (PgBouncer 1.21 and later with
 * `max_prepared_statements`; docs/deployment.md). A statement that fails as worthPreparingAgain
 * says runs once more; a second failure is the caller's.
 */
export function poolSql(pool: pg.Pool): PreparingSql {
  // By text. pg's client remembers which names each connection has parsed and only binds those
  // again; pg-pool drops the connection that failed, and the retry takes another.
  // - 26000: DEALLOCATE emptied one session. The others still answer to the name, and a new
  //   connection prepares it, so the retry keeps the name.
  // - 0A000: every connection that prepared the text holds the old result type, and the retry would
  //   fail on each of them, so the text takes a new name. It starts with the text's own hash, so one
  //   name is only ever one text.
  const names = new Map<string, string>();
  let renamed = 0;
  let unprepared = 0;
  const nameOf = (text: string) => {
    let name = names.get(text);
    // A text is checked when it is new: one named has passed.
    if (name === undefined) {
      statement(text);
      if (names.size < PREPARED_MAX) names.set(text, (name = statementName(text)));
    }
    if (name === undefined) unprepared++;
    return name;
  };
  const query = async (text: string, values: readonly SqlValue[]) => {
    const name = nameOf(text);
    try {
      // Unnamed (past PREPARED_MAX) still by the extended protocol: one statement a text, never
      // several stacked after a `;`, as the simple protocol would run them.
      const config = { name, text, values: [...values], queryMode: "extended" };
      return await pool.query(config);
    } catch (error) {
      if (name === undefined || !worthPreparingAgain(error)) throw error;
      if (retypedStatement(error) && names.get(text) === name) names.set(text, `${statementName(text)}_${++renamed}`);
      return pool.query({ name: names.get(text), text, values: [...values] });
    }
  };
  return {
    rows: async <T>(text: string, values: readonly SqlValue[] = []) => (await query(text, values)).rows as T[],
    run: async (text, values = []) => (await query(text, values)).rowCount ?? 0,
    unpreparedStatements: () => unprepared,
  };
}

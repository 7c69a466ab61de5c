import type { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaClient, type Prisma } from "../generated/prisma/client";
import { closePglite, openPglite } from "./adapters";
import { applyMigrations, type Transactional } from "./migrate";
import { pgliteSql, poolSql, type Sql } from "./sql";
import type { DatabaseTarget } from "./target";

export type Database = {
  prisma: PrismaClient;
  /** The same database without Prisma, for the sign-in path's stores (lib/db/sql.ts). */
  sql: Sql;
  target: DatabaseTarget;
  /** Memory the database holds inside this process (PGlite's WebAssembly memory); null when it runs elsewhere. */
  memoryBytes(): number | null;
  /** Statements run unprepared past the prepared texts' limit (PreparingSql, lib/db/sql.ts). */
  unpreparedStatements(): number;
  close(): Promise<void>;
};

function pgliteTransactional(db: PGlite): Transactional {
  return (work) =>
    db.transaction((tx) =>
      work({
        exec: async (sql) => void (await tx.exec(sql)),
        query: async <T>(sql: string, params: unknown[]) => (await tx.query<T>(sql, params)).rows,
      }),
    );
}

/**
 * The pool's answer to a database that stalls (a lock held, a failover, a dead peer), so that one
 * stall does not hold every connection, and every request queued behind it, for as long as it
 * lasts: a request waits at most 5 s for a free connection or a new one's login (and a new one's
 * session defaults, below, then count as a statement); a statement
 * the server never answers fails on the client after 30 s, and its connection is dropped; TCP
 * keepalive probes an idle connection after 10 s. DATABASE_URL's query may set `query_timeout`.
 */
export const POOL_TIMEOUTS = {
  connectionTimeoutMillis: 5_000,
  query_timeout: 30_000,
  keepAlive: true,
  keepAliveInitialDelayMillis: 10_000,
} as const;

/**
 * What the server ends on its own, on every new connection unless the role, the database or
 * DATABASE_URL (`?statement_timeout=…`, `?options=-c …`) set it already: a statement after 10 s,
 * a transaction left idle after 10 s. Set by a statement rather than in the startup packet, which
 * would override those settings, and which PgBouncer refuses for parameters it does not know.
 */
export const SESSION_DEFAULTS = { statement_timeout: "10s", idle_in_transaction_session_timeout: "10s" } as const;

const APPLY_SESSION_DEFAULTS = `SELECT ${Object.entries(SESSION_DEFAULTS)
  .map(([name, value]) => `CASE WHEN current_setting('${name}') = '0' THEN set_config('${name}', '${value}', false) END`)
  .join(", ")}`;

/**
 * Migrations, on a connection of their own with no time-out at all: a migration may rewrite a big
 * table, or wait for another instance's to finish.
 */
async function migratePostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, keepAlive: true });
  await client.connect();
  try {
    await applyMigrations(clientTransactional(client));
  } finally {
    await client.end().catch(() => {});
  }
}

function clientTransactional(client: pg.Client): Transactional {
  return async (work) => {
    try {
      await client.query("BEGIN");
      await client.query("SET LOCAL statement_timeout = 0");
      const result = await work({
        exec: async (sql) => void (await client.query(sql)),
        query: async <T>(sql: string, params: unknown[]) => (await client.query(sql, params)).rows as T[],
      });
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    }
  };
}

/**
 * A checked-out connection that the server ends goes back to the pool (which drops it), once.
 * Prisma 6's driver adapter never releases a transaction's connection whose COMMIT failed: with
 * the server ending connections (a restart, a failover), each such request would hold one of the
 * pool's connections for good, until no request could get one and pool.end() waited for ever.
 */
function releaseWhenEnded(pool: pg.Pool): void {
  const connect = pool.connect.bind(pool) as (callback: (error: Error | undefined, client?: pg.PoolClient) => void) => void;
  const guard = (client: pg.PoolClient) => {
    const release = client.release.bind(client);
    let released = false;
    const onEnd = () => client.release(new Error("the server ended a checked-out connection"));
    client.release = (error?: Error | boolean) => {
      if (released) return;
      released = true;
      client.removeListener("end", onEnd);
      release(error);
    };
    client.once("end", onEnd);
  };
  // pg-pool's own query() calls connect with a callback; the adapter awaits its promise.
  pool.connect = ((callback?: (error: Error | undefined, client?: pg.PoolClient, done?: () => void) => void) => {
    const connected = new Promise<pg.PoolClient>((resolve, reject) =>
      connect((error, client) => {
        if (error || !client) return reject(error ?? new Error("no connection"));
        guard(client);
        resolve(client);
      }),
    );
    if (!callback) return connected;
    connected.then(
      (client) => callback(undefined, client, () => client.release()),
      (error: Error) => callback(error),
    );
  }) as typeof pool.connect;
}

/** close() may be called more than once (shutdown, tests); only the first call closes. */
function closeOnce(database: Database): Database {
  let closing: Promise<void> | undefined;
  const close = database.close;
  return { ...database, close: () => (closing ??= close()) };
}

/** The driver adapter Prisma queries through (PGlite's or node-postgres's). */
export type DriverAdapter = NonNullable<Prisma.PrismaClientOptions["adapter"]>;

export type OpenOptions = {
  minFreeBytes?: number;
  /** Wraps the driver adapter Prisma queries through (a test counts database round trips this way). */
  wrapAdapter?: (adapter: DriverAdapter) => DriverAdapter;
  /** Wraps the statements sent without Prisma (the same test counts them). */
  wrapSql?: (sql: Sql) => Sql;
  /** PostgreSQL: an idle pooled connection failed (the server restarted or ended it); the pool has dropped it. */
  onConnectionLost?: (error: Error) => void;
};

/** Opens the database, applies pending migrations, and returns a Prisma client on it. */
export async function openDatabase(target: DatabaseTarget, options: OpenOptions = {}): Promise<Database> {
  const opened = await openUnwrapped(
    target,
    options.minFreeBytes ?? 0,
    options.wrapAdapter ?? ((adapter) => adapter),
    options.onConnectionLost ?? (() => {}),
  );
  return closeOnce(options.wrapSql ? { ...opened, sql: options.wrapSql(opened.sql) } : opened);
}

async function openUnwrapped(
  target: DatabaseTarget,
  minFreeBytes: number,
  wrap: (adapter: DriverAdapter) => DriverAdapter,
  onConnectionLost: (error: Error) => void,
): Promise<Database> {
  if (target.kind === "pglite") {
    const db = await openPglite(target.dataDir, undefined, minFreeBytes);
    await applyMigrations(pgliteTransactional(db));
    const prisma = new PrismaClient({ adapter: wrap(new PrismaPGlite(db)) });
    const sql = pgliteSql(db);
    return {
      prisma,
      sql,
      target,
      memoryBytes: () => (db.closed ? null : db.Module.wasmMemory.buffer.byteLength),
      unpreparedStatements: sql.unpreparedStatements,
      close: async () => {
        await prisma.$disconnect();
        await closePglite(db, target.dataDir);
      },
    };
  }
  await migratePostgres(target.url);
  const pool = new pg.Pool({
    ...POOL_TIMEOUTS,
    connectionString: target.url,
    max: 10,
    // Awaited before the new connection serves the statement it was opened for (not queued beside
    // it, which pg 8 warns of and pg 9 refuses). A failure ends that connection and fails the statement.
    // pg-pool 3.14 awaits this; @types/pg types it as returning void.
    // eslint-disable-next-line @typescript-eslint/no-misused-promises
    onConnect: async (client) => void (await client.query(APPLY_SESSION_DEFAULTS)),
  });
  // An idle connection's error (a restart, a failover, the server ending it) is emitted by the pool,
  // which drops that connection: with no listener it would be thrown, uncaught, from its socket.
  pool.on("error", onConnectionLost);
  releaseWhenEnded(pool);
  const prisma = new PrismaClient({ adapter: wrap(new PrismaPg(pool)) });
  const sql = poolSql(pool);
  return {
    prisma,
    sql,
    target,
    memoryBytes: () => null,
    unpreparedStatements: sql.unpreparedStatements,
    close: async () => {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

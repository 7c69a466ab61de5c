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
 * The pool's answer to a database that stalls (a lock held, a failover, a half-open connection):
 * a statement ends after 10 s on the server, and so does a transaction left idle; a request waits
 * at most 5 s for a connection (a free one from the pool, or a new one); TCP keepalive finds a
 * dead peer. Without them one stall held every connection, and every request queued behind it,
 * for as long as the stall lasted. `statement_timeout` and `idle_in_transaction_session_timeout`
 * in DATABASE_URL's query (milliseconds) win over these.
 */
export const POOL_TIMEOUTS = {
  statement_timeout: 10_000,
  idle_in_transaction_session_timeout: 10_000,
  connectionTimeoutMillis: 5_000,
  keepAlive: true,
} as const;

/** Migrations only: a migration may rewrite a big table, or wait for another instance's. */
function poolTransactional(pool: pg.Pool): Transactional {
  return async (work) => {
    const client = await pool.connect();
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
    } finally {
      client.release();
    }
  };
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
};

/** Opens the database, applies pending migrations, and returns a Prisma client on it. */
export async function openDatabase(target: DatabaseTarget, options: OpenOptions = {}): Promise<Database> {
  const opened = await openUnwrapped(target, options.minFreeBytes ?? 0, options.wrapAdapter ?? ((adapter) => adapter));
  return closeOnce(options.wrapSql ? { ...opened, sql: options.wrapSql(opened.sql) } : opened);
}

async function openUnwrapped(
  target: DatabaseTarget,
  minFreeBytes: number,
  wrap: (adapter: DriverAdapter) => DriverAdapter,
): Promise<Database> {
  if (target.kind === "pglite") {
    const db = await openPglite(target.dataDir, undefined, minFreeBytes);
    await applyMigrations(pgliteTransactional(db));
    const prisma = new PrismaClient({ adapter: wrap(new PrismaPGlite(db)) });
    return {
      prisma,
      sql: pgliteSql(db),
      target,
      memoryBytes: () => (db.closed ? null : db.Module.wasmMemory.buffer.byteLength),
      close: async () => {
        await prisma.$disconnect();
        await closePglite(db, target.dataDir);
      },
    };
  }
  const pool = new pg.Pool({ ...POOL_TIMEOUTS, connectionString: target.url, max: 10 });
  await applyMigrations(poolTransactional(pool));
  const prisma = new PrismaClient({ adapter: wrap(new PrismaPg(pool)) });
  return {
    prisma,
    sql: poolSql(pool),
    target,
    memoryBytes: () => null,
    close: async () => {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}

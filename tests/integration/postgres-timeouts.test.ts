import net from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { openDatabase, type Database, type OpenOptions } from "@/lib/db/client";
import { freshPostgres, postgresUrl, type TestDatabase } from "../helpers/databases";

const url = postgresUrl();

function withQuery(base: string, query: Record<string, string>): string {
  const parsed = new URL(base);
  for (const [name, value] of Object.entries(query)) parsed.searchParams.set(name, value);
  return parsed.toString();
}

/** Another session holding an exclusive lock on the users' table until `release`: a stalled database, as the pool sees it. */
async function lockUsers(databaseUrl: string) {
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  await holder.query(`BEGIN; LOCK TABLE "User" IN ACCESS EXCLUSIVE MODE`);
  return async () => {
    await holder.query("ROLLBACK").catch(() => {});
    await holder.end().catch(() => {});
  };
}

describe.skipIf(!url)("the PostgreSQL pool against a stalled database (needs TEST_DATABASE_URL)", () => {
  let database: TestDatabase;
  const opened: Database[] = [];
  const open = async (query: Record<string, string> = {}, options: OpenOptions = {}) => {
    const db = await openDatabase({ kind: "postgres", url: withQuery(database.url, query) }, options);
    opened.push(db);
    return db;
  };

  beforeAll(async () => {
    database = await freshPostgres(url!);
  });

  afterAll(async () => {
    await Promise.all(opened.map((db) => db.close()));
    await database?.dispose();
  });

  it("ends a statement after 10 s and an idle transaction likewise, by default", async () => {
    const db = await open();
    expect(await db.sql.rows("SHOW statement_timeout")).toEqual([{ statement_timeout: "10s" }]);
    expect(await db.sql.rows("SHOW idle_in_transaction_session_timeout")).toEqual([{ idle_in_transaction_session_timeout: "10s" }]);
  });

  it("sends a new connection's defaults before its first statement, never queued behind another on one client", async () => {
    // pg 8 warns (DeprecationWarning) and pg 9 will fail when a statement is queued on a client
    // that has one pending: a statement sent from the pool's "connect" event did that on every new
    // connection. `_queryQueue` is pg 8.23's own queue (pinned in package.json).
    const queuedBehind: number[] = [];
    const send = pg.Client.prototype.query;
    // query() has callback overloads that return void; this one passes every call through unchanged.
    // eslint-disable-next-line @typescript-eslint/no-misused-promises
    const spy = vi.spyOn(pg.Client.prototype, "query").mockImplementation(function (this: pg.Client, ...args: unknown[]) {
      queuedBehind.push((this as unknown as { _queryQueue: unknown[] })._queryQueue.length);
      return (send as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof send);
    try {
      const db = await open();
      // Ten at once: each needs a connection of its own, opened for it.
      const timeouts = await Promise.all(Array.from({ length: 10 }, () => db.sql.rows("SHOW statement_timeout")));
      expect(timeouts).toEqual(Array.from({ length: 10 }, () => [{ statement_timeout: "10s" }]));
    } finally {
      spy.mockRestore();
    }
    expect(queuedBehind.length).toBeGreaterThanOrEqual(20);
    expect(queuedBehind.filter((length) => length > 0)).toEqual([]);
  });

  it("outlives the server ending its idle connections: each is dropped, told, and the next statement served", async () => {
    // With no "error" listener on the pool, an idle connection's error is thrown from its socket's
    // event (an uncaught exception: vitest fails the run); with one, pg-pool drops that connection.
    const lost: string[] = [];
    const db = await open({}, { onConnectionLost: (error) => lost.push(error.message) });
    await Promise.all(Array.from({ length: 3 }, () => db.sql.rows("SELECT pg_sleep(0.05)")));
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ ended: boolean }>(
        "SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'idle'",
      );
      expect(rows.filter((row) => row.ended).length).toBeGreaterThanOrEqual(3);
    } finally {
      await admin.end();
    }
    await expect.poll(() => lost.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
    expect(await db.sql.rows("SELECT 1 AS one")).toEqual([{ one: 1 }]);
  });

  it("keeps a statement timeout the database was given: the defaults fill only what nobody set", async () => {
    const other = await freshPostgres(url!);
    const admin = new pg.Client({ connectionString: other.url });
    try {
      await admin.connect();
      await admin.query(`ALTER DATABASE "${new URL(other.url).pathname.slice(1)}" SET statement_timeout = '60s'`);
      const db = await openDatabase({ kind: "postgres", url: other.url });
      expect(await db.sql.rows("SHOW statement_timeout")).toEqual([{ statement_timeout: "1min" }]);
      expect(await db.sql.rows("SHOW idle_in_transaction_session_timeout")).toEqual([{ idle_in_transaction_session_timeout: "10s" }]);
      await db.close();
    } finally {
      await admin.end().catch(() => {});
      await other.dispose();
    }
  });

  it("fails a statement whose server stopped answering (a dead peer), and serves again on a new connection", async () => {
    // A relay between the pool and PostgreSQL that can go silent, as a peer gone mid-conversation does.
    let silent = false;
    const relay = net.createServer((inbound) => {
      const outbound = net.connect(5432, "127.0.0.1");
      inbound.on("data", (chunk) => void (silent || outbound.write(chunk)));
      outbound.on("data", (chunk) => void (silent || inbound.write(chunk)));
      inbound.on("error", () => outbound.destroy());
      outbound.on("error", () => inbound.destroy());
      inbound.on("close", () => outbound.destroy());
      outbound.on("close", () => inbound.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
    try {
      const relayed = new URL(database.url);
      relayed.host = `127.0.0.1:${(relay.address() as net.AddressInfo).port}`;
      // The client's wait shortened from its 30 s default through the URL.
      relayed.searchParams.set("query_timeout", "500");
      const db = await openDatabase({ kind: "postgres", url: relayed.toString() });
      opened.push(db);
      expect(await db.sql.rows("SELECT 1 AS n")).toEqual([{ n: 1 }]);
      silent = true;
      await expect(db.sql.rows("SELECT 2 AS n")).rejects.toThrow(/Query read timeout/);
      silent = false;
      expect(await db.sql.rows("SELECT 3 AS n")).toEqual([{ n: 3 }]);
    } finally {
      relay.close();
    }
  });

  it("migrates under any statement timeout: a migration may run long", async () => {
    const other = await freshPostgres(url!);
    try {
      const db = await openDatabase({ kind: "postgres", url: withQuery(other.url, { statement_timeout: "1" }) });
      await db.close();
      const check = new pg.Client({ connectionString: other.url });
      await check.connect();
      const { rows } = await check.query(`SELECT count(*)::int AS n FROM "_prisma_migrations" WHERE finished_at IS NOT NULL`);
      await check.end();
      expect(rows[0].n).toBeGreaterThan(10);
    } finally {
      await other.dispose();
    }
  });

  it("answers a statement stuck behind a lock with an error, on the sign-in path's SQL and through Prisma", async () => {
    const db = await open({ statement_timeout: "300" });
    const release = await lockUsers(database.url);
    try {
      await expect(db.sql.rows(`SELECT "id" FROM "User" LIMIT 1`)).rejects.toMatchObject({ code: "57014" });
      await expect(db.prisma.user.count()).rejects.toThrow(/statement timeout/);
    } finally {
      await release();
    }
    expect(await db.prisma.user.count()).toBe(0);
  });

  it("does not queue a request for a connection without end while every connection is stuck", async () => {
    // Statements that outlast the wait for a connection: all ten of the pool's are held.
    const db = await open({ statement_timeout: "8000" });
    const release = await lockUsers(database.url);
    try {
      const stuck = Array.from({ length: 10 }, () =>
        db.sql.rows(`SELECT "id" FROM "User" LIMIT 1`).then(
          () => "done",
          () => "failed",
        ),
      );
      await expect(db.sql.rows("SELECT 1")).rejects.toThrow(/timeout exceeded when trying to connect/);
      await release();
      expect(await Promise.all(stuck)).toEqual(Array(10).fill("done"));
    } finally {
      await release();
    }
  });
});

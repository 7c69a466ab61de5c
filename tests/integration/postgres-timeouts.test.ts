import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "@/lib/db/client";
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
  const open = async (query: Record<string, string> = {}) => {
    const db = await openDatabase({ kind: "postgres", url: withQuery(database.url, query) });
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

  it("migrates under any statement timeout: a migration may run long", async () => {
    const other = await freshPostgres(url!);
    try {
      const db = await openDatabase({ kind: "postgres", url: withQuery(other.url, { statement_timeout: "1" }) });
      expect(await db.sql.rows(`SELECT count(*)::int AS n FROM "User"`)).toEqual([{ n: 0 }]);
      await db.close();
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

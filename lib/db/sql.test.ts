import { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "@/lib/db/client";
import { LEASE_COMMIT, msToUtc, pgliteSql, utcToMs, type SqlValue } from "@/lib/db/sql";
import { utcTimestamp } from "@/lib/db/sql-time";
import { resolveDatabaseTarget } from "@/lib/db/target";
import { freshPglite, freshPostgres, postgresUrl, type TestDatabase } from "@/tests/helpers/databases";

// Evaluated at load so that CI=true without TEST_DATABASE_URL fails the file instead of skipping it.
const url = postgresUrl();

// A millisecond that a float seconds conversion, or a reading in the session's zone, would get wrong.
const AT_MS = Date.UTC(2026, 11, 2, 23, 59, 59, 999);

function sqlSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`Sql on ${label}`, () => {
    let database: TestDatabase;
    let db: Database;

    beforeAll(async () => {
      database = await makeDatabase();
      // Not UTC: a time must not be read in the session's zone. PostgreSQL: set for the database,
      // so every pooled connection has it; PGlite has one session.
      const target = resolveDatabaseTarget(database.url);
      if (target.kind === "postgres") {
        const setup = await openDatabase(target);
        await setup.sql.run(
          `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET timezone = %L', current_database(), 'Asia/Kolkata'); END $$`,
        );
        await setup.close();
      }
      db = await openDatabase(target);
      if (target.kind === "pglite") await db.prisma.$executeRawUnsafe(`SET TIME ZONE 'Asia/Kolkata'`);
      expect((await db.sql.rows<{ zone: string }>(`SELECT current_setting('TimeZone') AS "zone"`))[0]?.zone).toBe("Asia/Kolkata");
    });

    afterAll(async () => {
      await db?.close();
      await database?.dispose();
    });

    it("reads text, int4, float8, bool and null as the same JavaScript values on either driver", async () => {
      const [row] = await db.sql.rows<Record<string, unknown>>(
        `SELECT $1::text AS "text", $2::int AS "int", $3::float8 AS "float", $4::bool AS "bool", $5::text AS "none"`,
        ["ü ß", 2_147_483_647, 0.1, true, null],
      );
      expect(row).toStrictEqual({ text: "ü ß", int: 2_147_483_647, float: 0.1, bool: true, none: null });
    });

    it("writes a time as ms since the epoch and reads the same ms back, also through Prisma", async () => {
      const user = await db.prisma.user.create({ data: { email: "sql-time@example.com", passwordHash: "x" } });
      expect(await db.sql.run(`UPDATE "User" SET "emailVerifiedAt" = ${msToUtc("$1")} WHERE "id" = $2::uuid`, [AT_MS, user.id])).toBe(1);
      const [row] = await db.sql.rows<{ atMs: number; none: number | null }>(
        `SELECT ${utcToMs(`"emailVerifiedAt"`)} AS "atMs", ${utcToMs(`"passwordBreachedAt"`)} AS "none" FROM "User" WHERE "id" = $1::uuid`,
        [user.id],
      );
      expect(row).toStrictEqual({ atMs: AT_MS, none: null });
      // Prisma reads the column as the same instant, so the two paths agree on what was written.
      const read = await db.prisma.user.findUniqueOrThrow({ where: { id: user.id }, select: { emailVerifiedAt: true } });
      expect(read.emailVerifiedAt?.getTime()).toBe(AT_MS);
      // Prisma's raw queries write the same expression (utcTimestamp), read back alike.
      await db.prisma.$executeRaw`UPDATE "User" SET "passwordBreachedAt" = ${utcTimestamp(AT_MS + 1)} WHERE "id" = ${user.id}::uuid`;
      const [breached] = await db.sql.rows<{ atMs: number }>(
        `SELECT ${utcToMs(`"passwordBreachedAt"`)} AS "atMs" FROM "User" WHERE "id" = $1::uuid`,
        [user.id],
      );
      expect(breached).toStrictEqual({ atMs: AT_MS + 1 });
    });

    it("refuses transaction control and session settings, which would outlive the statement", async () => {
      for (const text of ["BEGIN", "  commit", "ROLLBACK", "START TRANSACTION", "SAVEPOINT s", "SET search_path = x", "RESET ALL"]) {
        await expect(db.sql.run(text), text).rejects.toThrow(/belong to Prisma/);
      }
      // A statement that only contains the words is a statement.
      expect(await db.sql.rows(`SELECT 'begin; set' AS "words"`)).toEqual([{ words: "begin; set" }]);
    });

    it("fails with the database's code and without the statement's parameters", async () => {
      const failed = await db.sql.rows(`SELECT $1::int AS "n"`, ["$argon2id$v=19$m=19456,t=2,p=1$secret"]).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(Error);
      expect(failed).toMatchObject({ code: "22P02" });
      expect(Object.keys(failed as object)).not.toContain("params");
      expect(Object.keys(failed as object)).not.toContain("query");
      expect(JSON.stringify(failed)).not.toContain("secret");
    });

    it("never reads or writes inside a transaction Prisma holds open", async () => {
      const email = "sql-isolation@example.com";
      await db.prisma.user.create({ data: { email, passwordHash: "x", lastLocale: "en" } });
      let read: Promise<{ lastLocale: string }[]> | undefined;
      let written: Promise<number> | undefined;
      const rolledBack = db.prisma
        .$transaction(async (tx) => {
          await tx.$executeRawUnsafe(`UPDATE "User" SET "lastLocale" = 'de' WHERE "email" = $1`, email);
          read = db.sql.rows(`SELECT "lastLocale" FROM "User" WHERE "email" = $1`, [email]);
          written = db.sql.run(`UPDATE "User" SET "passwordHash" = $1 WHERE "email" = $2`, ["y", email]).catch(() => -1);
          // Long enough for a statement that joined the transaction to have answered.
          await new Promise((resolve) => setTimeout(resolve, 100));
          throw new Error("roll back");
        })
        .catch((error: unknown) => error);
      expect(await rolledBack).toMatchObject({ message: "roll back" });
      // The transaction's uncommitted write is not read, and the rollback does not undo Sql's.
      expect(await read).toEqual([{ lastLocale: "en" }]);
      expect(await written).toBe(1);
      const after = await db.prisma.user.findUniqueOrThrow({ where: { email }, select: { lastLocale: true, passwordHash: true } });
      expect(after).toEqual({ lastLocale: "en", passwordHash: "y" });
    });

    it("answers the next statement after one that failed, and statements sent together each get their own rows", async () => {
      await expect(db.sql.rows(`SELECT 1/0 AS "n"`)).rejects.toMatchObject({ code: "22012" });
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          i % 2
            ? db.sql.rows<{ n: number }>(`SELECT $1::int AS "n"`, [i])
            : db.prisma.$queryRawUnsafe<{ n: number }[]>(`SELECT $1::int AS "n"`, i),
        ),
      );
      expect(answers.map((rows) => rows[0]?.n)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    });

    it("counts the rows a statement changed", async () => {
      expect(await db.sql.run(`UPDATE "User" SET "lastLocale" = $1 WHERE "email" = $2`, ["en", "nobody@example.com"])).toBe(0);
      expect(await db.sql.run(`UPDATE "User" SET "lastLocale" = $1 WHERE "email" = $2`, ["en", "sql-time@example.com"])).toBe(1);
    });

    // How often this very statement has been planned on its connection, as a prepared one.
    const RUNS = `SELECT COALESCE(max(generic_plans + custom_plans), 0)::int AS "runs" FROM pg_prepared_statements WHERE statement = current_query()`;

    it("prepares each statement once on a connection, and later runs only bind it", async () => {
      const runs: number[] = [];
      // One at a time: the pool hands back the connection that was last released.
      for (let i = 0; i < 3; i++) runs.push((await db.sql.rows<{ runs: number }>(RUNS))[0]!.runs);
      expect(runs).toEqual([1, 2, 3]);
    });

    it("binds each value as the type the statement gives it, and many at once each get their own rows", async () => {
      const text = `SELECT $1::int + 1 AS "next", $2::bool AS "flag", $3::bigint::float8 AS "ms", $4 || '!' AS "said"`;
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) => db.sql.rows<Record<string, unknown>>(text, [i, i % 2 === 0, AT_MS + i, `n${i}`])),
      );
      expect(answers.map(([row]) => row)).toStrictEqual(
        Array.from({ length: 12 }, (_, i) => ({ next: i + 1, flag: i % 2 === 0, ms: AT_MS + i, said: `n${i}!` })),
      );
    });

    // Sequential calls that succeed share one connection: the pool hands back the one last
    // released (pg-pool drops a connection whose statement failed).
    it("prepares a statement again after something dropped it, and forgets one that failed to prepare", async () => {
      const text = `SELECT $1::int * 2 AS "twice"`;
      expect(await db.sql.rows(text, [2])).toEqual([{ twice: 4 }]);
      await db.prisma.$executeRawUnsafe("DEALLOCATE ALL");
      expect(await db.sql.rows(text, [3])).toEqual([{ twice: 6 }]);
      expect(await db.sql.rows(text, [4])).toEqual([{ twice: 8 }]);
      // A statement that does not prepare fails each time with the database's own code, and
      // prepares once what it names exists.
      await db.prisma.$executeRawUnsafe(`CREATE TABLE "later" ("n" int)`);
      for (let i = 0; i < 2; i++) await expect(db.sql.rows(`SELECT "m" FROM "later"`)).rejects.toMatchObject({ code: "42703" });
      await db.prisma.$executeRawUnsafe(`ALTER TABLE "later" ADD COLUMN "m" int`);
      expect(await db.sql.rows(`SELECT "m" FROM "later"`)).toEqual([]);
    });

    it("prepares again a statement whose result type changed under it, as a migration may do", async () => {
      await db.prisma.$executeRawUnsafe(`CREATE TABLE "retyped" ("n" int)`);
      await db.prisma.$executeRawUnsafe(`INSERT INTO "retyped" VALUES (1)`);
      expect(await db.sql.rows(`SELECT "n" FROM "retyped"`)).toEqual([{ n: 1 }]);
      await db.prisma.$executeRawUnsafe(`ALTER TABLE "retyped" ALTER COLUMN "n" TYPE text`);
      expect(await db.sql.rows(`SELECT "n" FROM "retyped"`)).toEqual([{ n: "1" }]);
      expect(await db.sql.rows(`SELECT "n" FROM "retyped"`)).toEqual([{ n: "1" }]);
    });

    it("keeps no more than PREPARED_MAX statements, and still answers and counts the texts beyond", async () => {
      const before = db.unpreparedStatements();
      const answers = [];
      for (let i = 0; i < 210; i++) answers.push((await db.sql.rows<{ n: number }>(`SELECT ${i}::int AS "n"`))[0]?.n);
      expect(answers).toEqual(Array.from({ length: 210 }, (_, i) => i));
      const [kept] = await db.sql.rows<{ count: number }>(`SELECT count(*)::int AS "count" FROM pg_prepared_statements`);
      expect(kept!.count).toBeLessThanOrEqual(200);
      // Each run of a text beyond is counted (the operator's alert), a prepared one's is not.
      const after = db.unpreparedStatements();
      expect(after - before).toBeGreaterThanOrEqual(10);
      await db.sql.rows(`SELECT 209::int AS "n"`);
      expect(db.unpreparedStatements()).toBe(after + 1);
      await db.sql.rows(`SELECT 0::int AS "n"`);
      expect(db.unpreparedStatements()).toBe(after + 1);
    });

    // Past PREPARED_MAX, an unnamed text must not go by PostgreSQL's simple protocol,
    // which runs statements stacked after a `;` (an injected `SET` would stay on the connection).
    // Refused at Parse, before anything runs.
    it("runs one statement a text, also past PREPARED_MAX", async () => {
      for (let i = 0; i < 210; i++) await db.sql.rows(`SELECT ${i}::int AS "filled"`);
      for (const text of [`SELECT 1 AS "a"; SELECT 2 AS "b"`, `SELECT 1 AS "a"; SET statement_timeout = 0`]) {
        await expect(db.sql.rows(text)).rejects.toMatchObject({ code: "42601" });
        await expect(db.sql.run(text)).rejects.toMatchObject({ code: "42601" });
      }
    });

    it("makes no setting in a statement but LEASE_COMMIT's", async () => {
      for (const text of [
        `SELECT set_config('synchronous_commit', 'off', false)`,
        `SELECT pg_catalog.SET_CONFIG ('statement_timeout', '0', true)`,
        `SELECT 1 AS "n" FROM ${LEASE_COMMIT}, (SELECT "set_config"('work_mem', '1GB', true)) AS "more"`,
      ]) {
        await expect(db.sql.rows(text)).rejects.toThrow("Sql: a statement sets nothing but LEASE_COMMIT's");
      }
      expect(await db.sql.rows(`SELECT 1 AS "n" FROM ${LEASE_COMMIT}`)).toEqual([{ n: 1 }]);
    });
  });
}

sqlSuite("embedded PGlite", freshPglite);

/** A bare in-memory PGlite for `work`, closed after it. */
async function onBarePglite(work: (pglite: PGlite) => Promise<void>): Promise<void> {
  const pglite = await PGlite.create();
  try {
    await work(pglite);
  } finally {
    if (!pglite.closed) await pglite.close();
  }
}

describe("Sql's prepared statements on PGlite, when something else drops or makes them", () => {
  it("prepares a text that another Sql on the same PGlite already prepared under its name", () =>
    onBarePglite(async (pglite) => {
      const [first, second] = [pgliteSql(pglite), pgliteSql(pglite)];
      expect(await first.rows(`SELECT $1::int AS "n"`, [1])).toEqual([{ n: 1 }]);
      expect(await second.rows(`SELECT $1::int AS "n"`, [2])).toEqual([{ n: 2 }]);
      expect(await first.rows(`SELECT $1::int AS "n"`, [3])).toEqual([{ n: 3 }]);
    }));

  it("runs a new statement asked for before close() whole, before PGlite shuts down", () =>
    onBarePglite(async (pglite) => {
      const seen: string[] = [];
      const stream = pglite.execProtocolStream.bind(pglite);
      pglite.execProtocolStream = (...args) => (seen.push("statement"), stream(...args));
      const deactivate = pglite.Module._pgl_setPGliteActive.bind(pglite.Module);
      pglite.Module._pgl_setPGliteActive = (active: number) => (seen.push(`active ${active}`), deactivate(active));
      const running = pgliteSql(pglite).rows(`SELECT $1::int + 1 AS "n"`, [1]);
      await pglite.close();
      expect(await running).toEqual([{ n: 2 }]);
      // Its prepare and its run, then the shutdown; never a statement after it.
      expect(seen.slice(0, 3)).toEqual(["statement", "statement", "active 0"]);
    }));

  it("sends null for a value that is undefined, as PGlite.query does", () =>
    onBarePglite(async (pglite) => {
      const values = [undefined, undefined] as unknown as SqlValue[];
      const text = `SELECT $1::bigint AS "big", $2::bool AS "flag"`;
      expect(await pgliteSql(pglite).rows(text, values)).toEqual((await pglite.query(text, values)).rows);
      expect(await pgliteSql(pglite).rows(text, values)).toEqual([{ big: null, flag: null }]);
    }));
});

describe.skipIf(!url)("on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  sqlSuite("PostgreSQL", () => freshPostgres(url!));

  describe("Sql's prepared statements on a pool of several connections", () => {
    let database: TestDatabase;
    let db: Database;

    beforeAll(async () => {
      database = await freshPostgres(url!);
      db = await openDatabase(resolveDatabaseTarget(database.url));
    });

    afterAll(async () => {
      await db?.close();
      await database?.dispose();
    });

    /** The names this connection holds for `text`'s statement: the pool's last released one. */
    const namesOnLastConnection = async (text: string) =>
      (await db.sql.rows<{ name: string }>(`SELECT "name" FROM pg_prepared_statements WHERE "statement" = $1 ORDER BY "name"`, [text])).map(
        ({ name }) => name,
      );

    /** Enough runs at once that `text` is prepared on several pooled connections. */
    const prepareOnSeveralConnections = async (text: string, values: SqlValue[] = []) => {
      await Promise.all(Array.from({ length: 6 }, () => db.sql.rows(`SELECT pg_sleep(0.05)`)));
      await Promise.all(Array.from({ length: 6 }, () => db.sql.rows(text, values)));
    };

    // pg-pool drops the connection that failed and hands out the one released last: each other
    // connection still holds the statement under the old name with the old result type.
    it("runs a retyped statement on every connection that had prepared it, not only the first", async () => {
      await db.prisma.$executeRawUnsafe(`CREATE TABLE "retyped_pool" ("n" int)`);
      await db.prisma.$executeRawUnsafe(`INSERT INTO "retyped_pool" VALUES (1)`);
      const text = `SELECT "n" FROM "retyped_pool"`;
      await prepareOnSeveralConnections(text);
      const [open] = await db.sql.rows<{ count: number }>(
        `SELECT count(*)::int AS "count" FROM pg_stat_activity WHERE "datname" = current_database() AND "pid" <> pg_backend_pid()`,
      );
      expect(open!.count).toBeGreaterThanOrEqual(2);
      await db.prisma.$executeRawUnsafe(`ALTER TABLE "retyped_pool" ALTER COLUMN "n" TYPE text`);
      for (let i = 0; i < 6; i++) expect(await db.sql.rows(text)).toEqual([{ n: "1" }]);
    });

    // DEALLOCATE empties one session: the other connections still answer to the name, and a
    // connection without it prepares it under that name. A new name there would only add
    // statements, and behind a pooler that keeps none it would hide the error behind new names.
    it("runs a statement dropped by DEALLOCATE again under its own name", async () => {
      const text = `SELECT $1::int * 3 AS "thrice"`;
      await prepareOnSeveralConnections(text, [1]);
      const [name] = await namesOnLastConnection(text);
      await db.prisma.$executeRawUnsafe("DEALLOCATE ALL");
      for (let i = 0; i < 3; i++) expect(await db.sql.rows(text, [i])).toEqual([{ thrice: i * 3 }]);
      expect(await namesOnLastConnection(text)).toEqual([name]);
    });
  });
});

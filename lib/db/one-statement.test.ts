import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { openDatabase, type Database } from "@/lib/db/client";
import { guardedStatement, oneStatement, writeGuarded, writeTogether, type Guard, type Writes } from "@/lib/db/one-statement";
import { resolveDatabaseTarget } from "@/lib/db/target";
import { freshPglite, freshPostgres, postgresUrl, type TestDatabase } from "@/tests/helpers/databases";

// Evaluated at load so that CI=true without TEST_DATABASE_URL fails the file instead of skipping it.
const url = postgresUrl();

const insert =
  (table: string, id: string): Writes =>
  (param, when) => [`INSERT INTO ${table} ("id") SELECT ${param(id)} WHERE ${when}`];

/** The guard of these tests: the one_owner row `id`, at generation `generation`. */
const ownerAt =
  (id: string, generation: number): Guard =>
  (param) =>
    `SELECT 1 FROM one_owner WHERE "id" = ${param(id)} AND "generation" = ${param(generation)} FOR SHARE`;

describe("oneStatement", () => {
  it("numbers the parameters in the order the writes take them, across writes", () => {
    const { text, values } = oneStatement(insert("a", "x"), (param, when) => [
      `DELETE FROM b WHERE "id" = ${param("y")} AND ${when}`,
      `UPDATE c SET "n" = ${param(7)} WHERE "id" = ${param(null)}`,
    ]);
    expect(values).toEqual(["x", "y", 7, null]);
    expect(text).toBe(
      `WITH w0 AS (INSERT INTO a ("id") SELECT $1 WHERE TRUE),\nw1 AS (DELETE FROM b WHERE "id" = $2 AND TRUE),\nw2 AS (UPDATE c SET "n" = $3 WHERE "id" = $4)\nSELECT 1`,
    );
  });

  it("sends a single write as it is, and refuses to send nothing", () => {
    expect(oneStatement(insert("a", "x"))).toEqual({ text: `INSERT INTO a ("id") SELECT $1 WHERE TRUE`, values: ["x"] });
    expect(() => oneStatement()).toThrow(/nothing to write/);
    expect(() => oneStatement(() => [])).toThrow(/nothing to write/);
  });

  it("guarded: the guard first, once, every write on its condition, and the guard's finding as the one row", () => {
    const { text, values } = guardedStatement(ownerAt("o", 3), insert("a", "x"));
    expect(values).toEqual(["o", 3, "x"]);
    expect(text).toBe(
      `WITH "guard" AS MATERIALIZED (SELECT 1 FROM one_owner WHERE "id" = $1 AND "generation" = $2 FOR SHARE),\n` +
        `w0 AS (INSERT INTO a ("id") SELECT $3 WHERE EXISTS (SELECT 1 FROM "guard"))\nSELECT EXISTS (SELECT 1 FROM "guard") AS "found"`,
    );
  });

  it("refuses guarded writes when one of them leaves out the guard's condition", () => {
    expect(() => guardedStatement(ownerAt("o", 0), insert("a", "x"), (param) => [`DELETE FROM b WHERE "id" = ${param("y")}`])).toThrow(
      /ignores its guard/,
    );
  });
});

function writesSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`writeTogether and writeGuarded on ${label}`, () => {
    let database: TestDatabase;
    let db: Database;
    const ids = async (table: string) =>
      (await db.sql.rows<{ id: string }>(`SELECT "id" FROM ${table} ORDER BY "id"`)).map((row) => row.id);

    beforeAll(async () => {
      database = await makeDatabase();
      db = await openDatabase(resolveDatabaseTarget(database.url));
      await db.sql.run(`CREATE TABLE one_a ("id" text PRIMARY KEY)`);
      await db.sql.run(`CREATE TABLE one_b ("id" text PRIMARY KEY)`);
      await db.sql.run(`CREATE TABLE one_owner ("id" text PRIMARY KEY, "generation" int NOT NULL)`);
      await db.sql.run(`INSERT INTO one_owner VALUES ('o', 0)`);
    });

    afterAll(async () => {
      await db?.close();
      await database?.dispose();
    });

    it("writes two tables in one round trip", async () => {
      await writeTogether(db.sql, insert("one_a", "a1"), insert("one_b", "b1"));
      expect(await ids("one_a")).toEqual(["a1"]);
      expect(await ids("one_b")).toEqual(["b1"]);
    });

    it("writes none when one of them fails: the first table keeps nothing of a statement whose second write broke a key", async () => {
      await expect(writeTogether(db.sql, insert("one_a", "a2"), insert("one_b", "b1"))).rejects.toThrow();
      expect(await ids("one_a")).toEqual(["a1"]);
      expect(await ids("one_b")).toEqual(["b1"]);
    });

    it("a DELETE beside an INSERT sees the table as it was: it keeps the new row", async () => {
      await writeTogether(db.sql, insert("one_a", "a3"), (_param, when) => [`DELETE FROM one_a WHERE ${when}`]);
      expect(await ids("one_a")).toEqual(["a3"]);
    });

    it("guarded writes happen while the guard's row is as read, and not at all once it changed or went", async () => {
      expect(await writeGuarded(db.sql, ownerAt("o", 0), insert("one_a", "g1"), insert("one_b", "g1"))).toBe(true);
      expect(await writeGuarded(db.sql, ownerAt("o", 1), insert("one_a", "g2"), insert("one_b", "g2"))).toBe(false);
      expect(await writeGuarded(db.sql, ownerAt("nobody", 0), insert("one_a", "g3"))).toBe(false);
      expect(await ids("one_a")).toEqual(["a3", "g1"]);
      expect(await ids("one_b")).toEqual(["b1", "g1"]);
    });
  });
}

writesSuite("embedded PGlite", freshPglite);
describe.skipIf(!url)("on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  writesSuite("PostgreSQL", () => freshPostgres(url!));

  /**
   * Two connections, as two requests of a server on PostgreSQL: a change of the guard's row that
   * is in flight when the writes start, and writes in flight when the change starts. Whichever
   * comes first, the writes never land beside a change that did not see them.
   */
  describe("a guard against a change on another connection", () => {
    let database: TestDatabase;
    let pool: pg.Pool;
    const count = async (id: string) => Number((await pool.query(`SELECT count(*) FROM one_a WHERE "id" = $1`, [id])).rows[0].count);

    beforeAll(async () => {
      database = await freshPostgres(url!);
      pool = new pg.Pool({ connectionString: database.url, max: 4 });
      await pool.query(`CREATE TABLE one_a ("id" text PRIMARY KEY)`);
      await pool.query(`CREATE TABLE one_owner ("id" text PRIMARY KEY, "generation" int NOT NULL)`);
      await pool.query(`INSERT INTO one_owner VALUES ('o', 0)`);
    });

    afterAll(async () => {
      await pool?.end();
      await database?.dispose();
    });

    const sqlOf = (client: pg.Pool | pg.PoolClient) => ({
      rows: async <T>(text: string, values: readonly unknown[] = []) => (await client.query(text, [...values])).rows as T[],
      run: async (text: string, values: readonly unknown[] = []) => (await client.query(text, [...values])).rowCount ?? 0,
    });

    it("writes that start while a change is uncommitted wait for it, then see it and write nothing", async () => {
      const changer = await pool.connect();
      try {
        await changer.query("BEGIN");
        await changer.query(`UPDATE one_owner SET "generation" = "generation" + 1 WHERE "id" = 'o'`);
        const writing = writeGuarded(sqlOf(pool), ownerAt("o", 0), insert("one_a", "late"));
        const first = await Promise.race([writing.then(() => "written"), new Promise((resolve) => setTimeout(resolve, 300, "waiting"))]);
        expect(first).toBe("waiting");
        await changer.query("COMMIT");
        expect(await writing).toBe(false);
        expect(await count("late")).toBe(0);
      } finally {
        changer.release();
      }
    });

    it("a change that starts while the writes are uncommitted waits for them, and then sees what they wrote", async () => {
      const writer = await pool.connect();
      try {
        await writer.query("BEGIN");
        expect(await writeGuarded(sqlOf(writer), ownerAt("o", 1), insert("one_a", "early"))).toBe(true);
        const changing = pool.query(`UPDATE one_owner SET "generation" = "generation" + 1 WHERE "id" = 'o'`);
        const first = await Promise.race([changing.then(() => "changed"), new Promise((resolve) => setTimeout(resolve, 300, "waiting"))]);
        expect(first).toBe("waiting");
        await writer.query("COMMIT");
        await changing;
        // What a revocation after the change removes is there to remove.
        expect(await pool.query(`DELETE FROM one_a WHERE "id" = 'early'`)).toMatchObject({ rowCount: 1 });
      } finally {
        writer.release();
      }
    });
  });
});

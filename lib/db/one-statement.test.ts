import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "@/lib/db/client";
import { oneStatement, writeTogether, type Writes } from "@/lib/db/one-statement";
import { resolveDatabaseTarget } from "@/lib/db/target";
import { freshPglite, freshPostgres, postgresUrl, type TestDatabase } from "@/tests/helpers/databases";

// Evaluated at load so that CI=true without TEST_DATABASE_URL fails the file instead of skipping it.
const url = postgresUrl();

const insert =
  (table: string, id: string): Writes =>
  (param) => [`INSERT INTO ${table} ("id") VALUES (${param(id)})`];

describe("oneStatement", () => {
  it("numbers the parameters in the order the writes take them, across writes", () => {
    const { text, values } = oneStatement(insert("a", "x"), (param) => [
      `DELETE FROM b WHERE "id" = ${param("y")}`,
      `UPDATE c SET "n" = ${param(7)} WHERE "id" = ${param(null)}`,
    ]);
    expect(values).toEqual(["x", "y", 7, null]);
    expect(text).toBe(
      `WITH w0 AS (INSERT INTO a ("id") VALUES ($1)),\nw1 AS (DELETE FROM b WHERE "id" = $2),\nw2 AS (UPDATE c SET "n" = $3 WHERE "id" = $4)\nSELECT 1`,
    );
  });

  it("sends a single write as it is, and refuses to send nothing", () => {
    expect(oneStatement(insert("a", "x"))).toEqual({ text: `INSERT INTO a ("id") VALUES ($1)`, values: ["x"] });
    expect(() => oneStatement()).toThrow(/nothing to write/);
    expect(() => oneStatement(() => [])).toThrow(/nothing to write/);
  });
});

function writesSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`writeTogether on ${label}`, () => {
    let database: TestDatabase;
    let db: Database;
    const ids = async (table: string) =>
      (await db.sql.rows<{ id: string }>(`SELECT "id" FROM ${table} ORDER BY "id"`)).map((row) => row.id);

    beforeAll(async () => {
      database = await makeDatabase();
      db = await openDatabase(resolveDatabaseTarget(database.url));
      await db.sql.run(`CREATE TABLE one_a ("id" text PRIMARY KEY)`);
      await db.sql.run(`CREATE TABLE one_b ("id" text PRIMARY KEY)`);
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
      await writeTogether(db.sql, insert("one_a", "a3"), () => [`DELETE FROM one_a`]);
      expect(await ids("one_a")).toEqual(["a3"]);
    });
  });
}

writesSuite("embedded PGlite", freshPglite);
describe.skipIf(!url)("on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  writesSuite("PostgreSQL", () => freshPostgres(url!));
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { afterAll, describe, expect, it } from "vitest";
import { applyMigrations, type Transactional } from "./migrate";

describe("applyMigrations", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-migrate-"));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, sql: string) => {
    fs.mkdirSync(path.join(dir, name), { recursive: true });
    fs.writeFileSync(path.join(dir, name, "migration.sql"), sql);
  };

  // An in-memory PGlite takes several seconds to start on a busy 2-core machine.
  it("applies each migration once, and refuses to start when an applied one was edited, naming it", { timeout: 120_000 }, async () => {
    const db = new PGlite();
    const transaction: Transactional = (work) =>
      db.transaction((tx) =>
        work({
          exec: async (sql) => void (await tx.exec(sql)),
          query: async <T>(sql: string, params: unknown[]) => (await tx.query<T>(sql, params)).rows,
        }),
      );
    write("20260101000000_first", `CREATE TABLE "First" ("id" INTEGER PRIMARY KEY);`);
    write("20260102000000_second", `CREATE TABLE "Second" ("id" INTEGER PRIMARY KEY);`);
    expect(await applyMigrations(transaction, dir)).toEqual(["20260101000000_first", "20260102000000_second"]);
    expect(await applyMigrations(transaction, dir)).toEqual([]);

    write("20260101000000_first", `CREATE TABLE "First" ("id" INTEGER PRIMARY KEY, "added" TEXT);`);
    write("20260103000000_third", `CREATE TABLE "Third" ("id" INTEGER PRIMARY KEY);`);
    await expect(applyMigrations(transaction, dir)).rejects.toThrow(/Migration 20260101000000_first was changed after it was applied/);
    // Nothing after the edited migration ran.
    expect((await db.query(`SELECT to_regclass('"Third"') AS "table"`)).rows).toEqual([{ table: null }]);
    await db.close();
  });
});

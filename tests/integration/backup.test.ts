import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { runScript } from "../helpers/cli";
import { afterAll, describe, expect, it } from "vitest";

const PASSWORD = "the right passphrase";

/** `npm run db:backup` / `db:restore` as an operator runs them, on a real PGlite folder. */
describe("backups of the embedded database", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-backup-"));
  const dataDir = path.join(root, "pglite");
  const env = { ...process.env, DATABASE_URL: `pglite:${dataDir}` };
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  const cli = (...args: string[]) => runScript("db", args, env);

  /** Opens the folder as the app does (migrations at start), runs `work`, and closes it. */
  async function withDatabase<T>(work: (db: import("@/lib/db/client").Database) => Promise<T>): Promise<T> {
    const { openDatabase } = await import("@/lib/db/client");
    const db = await openDatabase({ kind: "pglite", dataDir });
    try {
      return await work(db);
    } finally {
      await db.close();
    }
  }

  async function signIn(email: string) {
    const { verifyCredentials } = await import("@/lib/users/accounts");
    const { argon2Params } = await import("@/lib/password/hash");
    const { argon2Hasher } = await import("@/lib/password/hash");
    return withDatabase((db) => verifyCredentials(db.sql, { email, password: PASSWORD }, argon2Hasher(argon2Params("owasp"))));
  }

  it("backs up, survives a wipe by restore, and signs in again; refuses what would corrupt or mislead", { timeout: 180_000 }, async () => {
    const { registerAccount } = await import("@/lib/users/accounts");
    const { argon2Params } = await import("@/lib/password/hash");
    const { argon2Hasher } = await import("@/lib/password/hash");
    await withDatabase((db) =>
      registerAccount(db.prisma, { email: "kept@example.com", password: PASSWORD }, argon2Hasher(argon2Params("owasp")), Date.now()),
    );
    const file = path.join(root, "gatehouse.tar.gz");

    const backup = await cli("backup", file);
    expect(backup, backup.out).toMatchObject({ code: 0 });
    expect(fs.statSync(file).size).toBeGreaterThan(0);
    // Issue 59: backups were 0644, the hashes and sealed secrets readable by every local user.
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    // While a process holds the folder, neither direction runs.
    const held = await withDatabase(async () => [await cli("backup", path.join(root, "other.tar.gz")), await cli("restore", file)]);
    for (const refused of held) {
      expect(refused.code).toBe(1);
      expect(refused.out).toMatch(/in use by another process.*needs the instance stopped/s);
    }
    expect(fs.existsSync(path.join(root, "other.tar.gz"))).toBe(false);

    // Wiped (and an account made after the backup, which the restore must not keep).
    await withDatabase((db) =>
      registerAccount(db.prisma, { email: "later@example.com", password: PASSWORD }, argon2Hasher(argon2Params("owasp")), Date.now()),
    );
    fs.rmSync(dataDir, { recursive: true, force: true });
    const restored = await cli("restore", file);
    expect(restored, restored.out).toMatchObject({ code: 0 });
    // The restored folder is the owner's alone before any server opens it.
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(dataDir, "PG_VERSION")).mode & 0o777).toBe(0o600);
    expect(await signIn("kept@example.com")).toMatchObject({ email: "kept@example.com" });
    expect(await signIn("later@example.com")).toBeNull();

    // A truncated file and a file that is no backup: refused, and the folder is untouched.
    const truncated = path.join(root, "truncated.tar.gz");
    fs.writeFileSync(truncated, fs.readFileSync(file).subarray(0, 2_000));
    const notBackup = path.join(root, "notes.txt");
    fs.writeFileSync(notBackup, "hello");
    for (const bad of [truncated, notBackup, path.join(root, "missing.tar.gz")]) {
      const refused = await cli("restore", bad);
      expect(refused.code, bad).toBe(1);
      expect(refused.out).toMatch(/Not a readable Gatehouse backup|does not exist/);
    }
    expect(await signIn("kept@example.com")).toMatchObject({ email: "kept@example.com" });
    // An existing file is never overwritten by a backup.
    expect((await cli("backup", file)).code).toBe(1);
  });

  it(
    "refuses a backup whose index or table page is damaged, naming the relation, and checks a stopped folder",
    { timeout: 180_000 },
    async () => {
      const { damagePage } = await import("../helpers/damage");
      const file = path.join(root, "sound.tar.gz");
      expect((await cli("backup", file)).code).toBe(0);
      const files = await withDatabase(async (db) => {
        const [row] = await db.prisma.$queryRaw<{ index: string; table: string }[]>`
        SELECT pg_relation_filepath('"User_email_key"') AS index, pg_relation_filepath('"User"') AS table`;
        return row!;
      });
      // Page 1 of the unique email index is its first leaf (page 0 is the metapage); page 0 of the table holds the accounts.
      const damagedIndex = path.join(root, "damaged-index.tar.gz");
      fs.writeFileSync(damagedIndex, damagePage(fs.readFileSync(file), files.index, 1));
      const damagedTable = path.join(root, "damaged-table.tar.gz");
      fs.writeFileSync(damagedTable, damagePage(fs.readFileSync(file), files.table, 0));
      for (const [bad, relation] of [
        [damagedIndex, "User_email_key"],
        [damagedTable, '"User"'],
      ] as const) {
        const refused = await cli("restore", bad);
        expect(refused.code, refused.out).toBe(1);
        expect(refused.out).toContain("damaged");
        expect(refused.out).toContain(relation);
      }
      expect(await signIn("kept@example.com")).toMatchObject({ email: "kept@example.com" });

      // db:check on the stopped folder: sound now; a restore into a missing folder holds its lock too.
      const checked = await cli("check");
      expect(checked, checked.out).toMatchObject({ code: 0 });
      expect(checked.out).toMatch(/every table and index sound/);
      const elsewhere = path.join(root, "fresh");
      const { lockMissingFolder } = await import("@/lib/db/adapters");
      const release = await lockMissingFolder(elsewhere);
      try {
        const held = await runScript("db", ["restore", file], { ...process.env, DATABASE_URL: `pglite:${elsewhere}` });
        expect(held.code).toBe(1);
        expect(held.out).toMatch(/in use by another process/);
      } finally {
        await release();
      }
      expect(fs.existsSync(elsewhere)).toBe(false);
    },
  );
});

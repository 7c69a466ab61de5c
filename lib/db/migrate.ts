import { createHash, randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/** The two calls migrations need, on a driver connection that is inside one transaction. */
export type SqlRunner = {
  /** Runs several statements (simple protocol). */
  exec(sql: string): Promise<void>;
  query<T>(sql: string, params: unknown[]): Promise<T[]>;
};

export type Transactional = <T>(work: (sql: SqlRunner) => Promise<T>) => Promise<T>;

export const MIGRATIONS_DIR = path.join("prisma", "migrations");

// Prisma's own bookkeeping table, created as `prisma migrate deploy` creates it, so the CLI
// (`prisma migrate status`, `npm run db:migrate`) and this runner agree on what is applied.
const BOOKKEEPING = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id" VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum" VARCHAR(64) NOT NULL,
  "finished_at" TIMESTAMPTZ,
  "migration_name" VARCHAR(255) NOT NULL,
  "logs" TEXT,
  "rolled_back_at" TIMESTAMPTZ,
  "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

// Any fixed number: it serialises concurrent starts of several instances on one PostgreSQL,
// from the bookkeeping table's creation on.
const MIGRATION_LOCK_KEY = 72_707_369;

export class ChangedMigrationError extends Error {
  constructor(name: string, dir: string) {
    super(
      `Migration ${name} was changed after it was applied: ${path.join(dir, name, "migration.sql")} no longer matches the checksum ` +
        "recorded in _prisma_migrations. Restore the file and put the change in a new migration.",
    );
    this.name = "ChangedMigrationError";
  }
}

export function listMigrations(dir: string): { name: string; sql: string; checksum: string }[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = fs.readFileSync(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    });
}

/**
 * Applies pending migrations from prisma/migrations at start, in-process. The Prisma CLI does
 * the same (`npm run db:migrate`) but costs about 12 s per run here, mostly its own start-up,
 * and has no programmatic API. Each migration and its record commit together, so a crash
 * leaves it either applied or not. An applied migration whose file has changed stops the start.
 */
export async function applyMigrations(transaction: Transactional, dir = MIGRATIONS_DIR): Promise<string[]> {
  const applied: string[] = [];
  for (const migration of listMigrations(dir)) {
    const didApply = await transaction(async (sql) => {
      // The lock comes before any DDL: two starts that both ran CREATE TABLE IF NOT EXISTS unlocked
      // on an empty database could both find no table, and one failed on the type's unique index.
      await sql.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
      await sql.exec(BOOKKEEPING);
      const done = await sql.query<{ checksum: string }>(
        `SELECT checksum FROM "_prisma_migrations" WHERE migration_name = $1 AND finished_at IS NOT NULL AND rolled_back_at IS NULL`,
        [migration.name],
      );
      if (done.length > 0) {
        // An applied migration is history: editing its file changes nothing in databases that ran it,
        // so the schema would silently differ between old and new installations.
        if (done.every((row) => row.checksum !== migration.checksum)) throw new ChangedMigrationError(migration.name, dir);
        return false;
      }
      await sql.exec(migration.sql);
      await sql.query(
        `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count) VALUES ($1, $2, $3, now(), now(), 1)`,
        [randomUUID(), migration.checksum, migration.name],
      );
      return true;
    });
    if (didApply) applied.push(migration.name);
  }
  return applied;
}

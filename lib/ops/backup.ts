import fs from "node:fs";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { closePglite, lockMissingFolder, openPglite } from "@/lib/db/adapters";
import { checkIntegrity, describeProblems, INTEGRITY_EXTENSIONS } from "@/lib/db/integrity";
import { listMigrations, MIGRATIONS_DIR } from "@/lib/db/migrate";
import { keepPrivate, PRIVATE_FILE_MODE } from "@/lib/db/private-folder";
import { messageOf } from "@/lib/log/message";

/**
 * Backups of the embedded database: PGlite's own dump of its data folder (a gzipped tar).
 * Both directions take the folder's lock, so neither runs beside a server on the same folder:
 * a dump of a folder that a live process is writing could be inconsistent, so it is refused with
 * a message instead (stop the instance, back up, start it; the backup takes a second or two).
 * Both directions, and `npm run db:check`, run amcheck on every table and index of the dump, and
 * refuse a damaged one, naming the relation.
 */

// Refuse at once rather than wait out a stale lock: an operator is at the keyboard.
const LOCK_WAIT_MS = 0;

export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "BackupError";
  }
}

async function lockedOpen(dataDir: string): Promise<PGlite> {
  try {
    return await openPglite(dataDir, LOCK_WAIT_MS);
  } catch (error) {
    throw new BackupError(`${messageOf(error)} A backup or restore needs the instance stopped.`);
  }
}

/** Writes the data folder's dump to `file`, never over an existing file, and never a partial one under its name. */
export async function backupPglite(dataDir: string, file: string): Promise<{ bytes: number; migrations: number }> {
  if (!fs.existsSync(dataDir)) throw new BackupError(`${dataDir} does not exist: nothing to back up.`);
  const db = await lockedOpen(dataDir);
  try {
    const dump = Buffer.from(await (await db.dumpDataDir("gzip")).arrayBuffer());
    // The dump is checked as a restore would check it: a backup that cannot be restored is refused now.
    const migrations = await checkBackup(new Blob([dump]), `${dataDir} is damaged; no backup was written`);
    const partial = `${file}.partial-${process.pid}`;
    // The dump holds what the data folder holds: for the owner alone, as the folder is.
    fs.writeFileSync(partial, dump, { flag: "wx", mode: PRIVATE_FILE_MODE });
    try {
      // A hard link never replaces an existing file: an earlier backup is never overwritten.
      fs.linkSync(partial, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") throw new BackupError(`${file} already exists: choose another name.`);
      throw error;
    } finally {
      fs.rmSync(partial, { force: true });
    }
    return { bytes: dump.length, migrations };
  } finally {
    await closePglite(db, dataDir);
  }
}

/**
 * Replaces the data folder with the backup in `file`, or changes nothing. The backup is first
 * loaded and checked in memory (a truncated or foreign file fails here), then written to a new
 * folder, and only then swapped in; the folder it replaces is kept beside it.
 */
export async function restorePglite(file: string, dataDir: string): Promise<{ replacedFolder: string | null; migrations: number }> {
  if (!fs.existsSync(file)) throw new BackupError(`${file} does not exist.`);
  const blob = new Blob([fs.readFileSync(file)]);
  const migrations = await checkBackup(blob);

  // Hold the folder's lock for the whole swap, whether or not the folder exists yet: no server may start on it meanwhile.
  const current = fs.existsSync(dataDir) ? await lockedOpen(dataDir) : null;
  const releaseMissing = current
    ? null
    : await lockMissingFolder(dataDir).catch((error: Error) => {
        throw new BackupError(`${error.message} A backup or restore needs the instance stopped.`);
      });
  const staging = `${dataDir}.restoring-${process.pid}`;
  const replaced = `${dataDir}.before-restore-${new Date().toISOString().replace(/[:.]/g, "-")}`;
  try {
    fs.rmSync(staging, { recursive: true, force: true });
    const restored = await PGlite.create({ dataDir: staging, loadDataDir: blob, postgresqlconf: ["log_startup_progress_interval = 0"] });
    await restored.close();
    keepPrivate(staging);
    if (current) await current.close();
    if (fs.existsSync(dataDir)) fs.renameSync(dataDir, replaced);
    fs.renameSync(staging, dataDir);
    return { replacedFolder: current ? replaced : null, migrations };
  } catch (error) {
    fs.rmSync(staging, { recursive: true, force: true });
    if (!fs.existsSync(dataDir) && fs.existsSync(replaced)) fs.renameSync(replaced, dataDir);
    throw error;
  } finally {
    if (current) await closePglite(current, dataDir);
    await releaseMissing?.().catch(() => {});
  }
}

/** `npm run db:check`: the stopped instance's folder, checked as a backup of it would be. */
export async function checkPglite(dataDir: string): Promise<{ migrations: number }> {
  if (!fs.existsSync(dataDir)) throw new BackupError(`${dataDir} does not exist: nothing to check.`);
  const db = await lockedOpen(dataDir);
  try {
    const dump = await db.dumpDataDir("gzip");
    return { migrations: await checkBackup(dump, `${dataDir} is damaged`) };
  } finally {
    await closePglite(db, dataDir);
  }
}

/**
 * Opens the backup in memory: it must be a PGlite dump of a Gatehouse database this version
 * knows, and amcheck must find every table and index page sound.
 */
async function checkBackup(blob: Blob, damaged = "The backup is damaged; nothing was restored"): Promise<number> {
  let db: PGlite | undefined;
  try {
    db = await PGlite.create({ loadDataDir: blob, extensions: INTEGRITY_EXTENSIONS });
    const applied = await appliedMigrations(db);
    const known = new Set(listMigrations(MIGRATIONS_DIR).map((migration) => migration.name));
    const unknown = applied.filter((name) => !known.has(name));
    if (applied.length === 0) throw new BackupError("The backup holds no Gatehouse schema.");
    // A newer version's backup: this code does not know its schema; an older one is migrated at start.
    if (unknown.length > 0)
      throw new BackupError(
        `The backup comes from a newer version of Gatehouse (migrations ${unknown.join(", ")}); restore it with that version.`,
      );
    const problems = await checkIntegrity(db);
    if (problems.length > 0) throw new BackupError(`${damaged} (amcheck): ${describeProblems(problems)}`);
    await db.query(`SELECT count(*) FROM "User"`);
    return applied.length;
  } catch (error) {
    if (error instanceof BackupError) throw error;
    throw new BackupError(`Not a readable Gatehouse backup (truncated, or not a PGlite dump): ${messageOf(error)}`);
  } finally {
    await db?.close().catch(() => {});
  }
}

async function appliedMigrations(db: PGlite): Promise<string[]> {
  const exists = await db.query<{ present: boolean }>(`SELECT to_regclass('public._prisma_migrations') IS NOT NULL AS present`);
  if (!exists.rows[0]?.present) return [];
  const { rows } = await db.query<{ migration_name: string }>(
    `SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL ORDER BY migration_name`,
  );
  return rows.map((row) => row.migration_name);
}

export function resolveBackupFile(arg: string | undefined): string {
  if (!arg) throw new BackupError("Name the backup file, e.g. npm run db:backup -- backups/gatehouse.tar.gz");
  return path.resolve(arg);
}

import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import v8 from "node:v8";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaPGlite } from "pglite-prisma-adapter";
import lockfile from "proper-lockfile";
// Relative, not "@/": prisma.config.ts loads this file without the app's path aliases.
import { messageOf } from "../log/message";
import { forget, remember } from "../remember";
import { keepPrivate, PRIVATE_FOLDER_MODE, PrivateNodeFS } from "./private-folder";
import type { DatabaseTarget } from "./target";

const NAME_OID = 19;
const TEXT_OID = 25;

/**
 * Prisma's JS schema engine cannot deserialize PostgreSQL's `name` type (OID 19), which the
 * catalogue queries of `migrate deploy` return (prisma/orm#27403). `name` is text on the wire,
 * so reporting it as text is exact.
 */
class NameAsTextPool extends pg.Pool {
  // pg's query has many overloads; this wrapper only rewrites the field metadata of results.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: any[]): any {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const result = (super.query as any)(...args);
    if (result && typeof result.then === "function") {
      return result.then((res: pg.QueryResult) => {
        for (const field of res?.fields ?? []) if (field.dataTypeID === NAME_OID) field.dataTypeID = TEXT_OID;
        return res;
      });
    }
    return result;
  }
}

// A stale lock (left by a killed process) is taken over after this long without a heartbeat.
const LOCK_STALE_MS = 10_000;

// One PGlite per data folder per process: the app and the Prisma CLI adapter share it.
const pgliteName = (dataDir: string) => `pglite:${dataDir}`;

/**
 * Opens PGlite on its data folder, holding an inter-process lock for as long as the process
 * lives: two PostgreSQL instances writing one data folder would corrupt it.
 */
export function openPglite(dataDir: string, lockWaitMs = LOCK_STALE_MS + 2_000, minFreeBytes = 0): Promise<PGlite> {
  return remember(pgliteName(dataDir), () => lockAndOpen(dataDir, lockWaitMs, minFreeBytes));
}

const MIB = 1024 * 1024;
const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;

function freeBytesOf(folder: string): number | null {
  try {
    const stats = fs.statfsSync(folder);
    return stats.bavail * stats.bsize;
  } catch {
    return null;
  }
}

/**
 * Before PGlite opens the folder: it must be writable and have room. PGlite aborts on a full
 * disk with "Aborted(). Build with -sASSERTIONS…", which names neither the folder nor the cause.
 */
export function checkDataFolder(dataDir: string, minFreeBytes: number): void {
  try {
    fs.accessSync(dataDir, fs.constants.W_OK);
    const probe = path.join(dataDir, `.write-probe-${process.pid}`);
    fs.writeFileSync(probe, "ok");
    fs.rmSync(probe, { force: true });
  } catch (error) {
    throw new Error(
      `The embedded database folder ${dataDir} is not writable (${(error as NodeJS.ErrnoException).code ?? String(error)}); ` +
        `${mib(freeBytesOf(dataDir) ?? 0)} free. Free some space or fix its permissions, or set DATABASE_URL to another pglite: folder.`,
    );
  }
  const free = freeBytesOf(dataDir);
  if (free !== null && free < minFreeBytes) {
    throw new Error(
      `The embedded database folder ${dataDir} has ${mib(free)} free, less than DISK_MIN_FREE_MB (${mib(minFreeBytes)}): ` +
        "free some space on its disk (or lower DISK_MIN_FREE_MB) and start again.",
    );
  }
}

/** Closes cleanly (a checkpoint, so the next start needs no recovery) and releases the lock. */
export async function closePglite(db: PGlite, dataDir: string): Promise<void> {
  forget(pgliteName(dataDir));
  if (!db.closed) await db.close();
  await lockfile.unlock(dataDir, { lockfilePath: `${dataDir}.lock` }).catch(() => {});
}

async function lockAndOpen(dataDir: string, lockWaitMs: number, minFreeBytes: number): Promise<PGlite> {
  try {
    fs.mkdirSync(dataDir, { recursive: true, mode: PRIVATE_FOLDER_MODE });
  } catch (error) {
    throw new Error(
      `The embedded database folder ${dataDir} cannot be created: ${(error as NodeJS.ErrnoException).code ?? String(error)}.`,
    );
  }
  checkDataFolder(dataDir, minFreeBytes);
  try {
    await lockfile.lock(dataDir, {
      lockfilePath: `${dataDir}.lock`,
      stale: LOCK_STALE_MS,
      // Waiting a little longer than the stale period lets a restart after a crash succeed.
      retries: { retries: Math.ceil(lockWaitMs / 500), minTimeout: 500, maxTimeout: 500 },
      onCompromised: (err) => {
        // The lock was taken from under us: continuing could corrupt the data folder.
        console.error(`PGlite data folder lock lost (${dataDir}): ${err.message}; exiting`);
        process.exit(1);
      },
    });
  } catch {
    throw new Error(
      `The embedded database folder ${dataDir} is in use by another process. ` +
        "Stop the other Gatehouse process (or `npm run db:migrate`), or set DATABASE_URL to another pglite: folder.",
    );
  }
  try {
    // initdb's memory is never given back to the system: run in this process it would stay in
    // the server's RSS for good (about 400 MiB, bench/RESULTS.md part 11), so a new folder is
    // initialised by a short-lived child process and only opened here.
    if (!fs.existsSync(path.join(dataDir, "PG_VERSION"))) await initialiseInChild(dataDir);
    // Issue 59: the folder was 0755 and its files 0666, open to every local user.
    keepPrivate(dataDir);
    compileWasmLean();
    return await PGlite.create({ fs: new PrivateNodeFS(dataDir), postgresqlconf: EMBEDDED_POSTGRES_SETTINGS });
  } catch (error) {
    await lockfile.unlock(dataDir, { lockfilePath: `${dataDir}.lock` }).catch(() => {});
    const free = freeBytesOf(dataDir);
    throw new Error(
      `The embedded database in ${dataDir} could not open (${messageOf(error).split("\n")[0]}); ` +
        `${free === null ? "its free space is unknown" : `${mib(free)} free on its disk`}. A full disk ends PGlite this way: free some space and start again.`,
    );
  }
}

/**
 * PostgreSQL's defaults size its caches for a server of its own (128 MB of shared buffers, which
 * PGlite's WebAssembly memory grows to hold and never returns); an instance's database is a few
 * thousand rows, served from the operating system's file cache when not from these.
 */
export const EMBEDDED_POSTGRES_SETTINGS = [
  // PostgreSQL arms a 10 s startup-progress timer after an unclean shutdown, and in PGlite's
  // single-user mode it keeps re-arming, so a short-lived process (the Prisma CLI) never exits.
  "log_startup_progress_interval = 0",
  "shared_buffers = 16MB",
  "temp_buffers = 1MB",
  "wal_buffers = 1MB",
  "work_mem = 1MB",
];

/**
 * V8 compiles PGlite's 9 MB of WebAssembly twice, quickly (Liftoff) and then optimised
 * (TurboFan) for the functions that run often; the optimised copies hold about 80 MiB for good.
 * A query is mostly waiting on the file system, so the quick copy serves it as fast (part 11).
 * Set before the first compilation; it changes nothing for code compiled earlier.
 */
function compileWasmLean(): void {
  v8.setFlagsFromString("--liftoff-only");
}

const INIT_TIMEOUT_MS = 120_000;

/** Creates the data folder's cluster (initdb) in a child process, which gives its memory back when it exits. */
function initialiseInChild(dataDir: string): Promise<void> {
  // CommonJS resolved from this process's working folder, where the app's node_modules is, in the
  // repository and in the standalone bundle alike (this file may be bundled, its path no guide).
  const script = `require("@electric-sql/pglite").PGlite.create({ dataDir: process.argv[1], postgresqlconf: ${JSON.stringify(EMBEDDED_POSTGRES_SETTINGS)} }).then((db) => db.close()).catch((error) => { console.error(error instanceof Error ? error.message : String(error)); process.exit(1); });`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ["-e", script, dataDir], { timeout: INIT_TIMEOUT_MS, killSignal: "SIGKILL" }, (error, _stdout, stderr) =>
      error ? reject(new Error(stderr.trim().split("\n")[0] || error.message)) : resolve(),
    );
  });
}

/**
 * The folder's lock while the folder does not exist yet (a restore into a new folder): no server
 * may create and open it meanwhile. Returns the release.
 */
export async function lockMissingFolder(dataDir: string): Promise<() => Promise<void>> {
  try {
    return await lockfile.lock(dataDir, { lockfilePath: `${dataDir}.lock`, realpath: false, stale: LOCK_STALE_MS, retries: 0 });
  } catch {
    throw new Error(`The embedded database folder ${dataDir} is in use by another process.`);
  }
}

/** The adapter for the Prisma CLI (prisma.config.ts): the same databases the app opens. */
export async function createCliAdapter(target: DatabaseTarget): Promise<PrismaPg | PrismaPGlite> {
  if (target.kind === "postgres") return new PrismaPg(new NameAsTextPool({ connectionString: target.url, max: 2 }));
  return new PrismaPGlite(await openPglite(target.dataDir));
}

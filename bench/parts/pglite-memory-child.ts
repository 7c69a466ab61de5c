/**
 * Part 11's memory levers, one at a time: a process of its own opens PGlite the way its input
 * says, runs a sign-in's worth of small queries many times, and prints its memory as JSON.
 * bench/parts/peer.ts runs one child per variant, so that no variant inherits another's memory.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import v8 from "node:v8";
import { PGlite } from "@electric-sql/pglite";
import { EMBEDDED_POSTGRES_SETTINGS } from "@/lib/db/adapters";

export type PgliteMemoryInput = {
  /** Create the cluster (initdb) in this process, as a server did on a new folder before. */
  initdbHere: boolean;
  /** Gatehouse's postgresql.conf (lib/db/adapters.ts), or PostgreSQL's defaults. */
  leanSettings: boolean;
  /** V8 compiles the WebAssembly once (Liftoff) and never optimises it (TurboFan). */
  liftoffOnly: boolean;
  queries: number;
};

export type PgliteMemoryOutput = { rssBytes: number; heapUsedBytes: number; wasmMemoryBytes: number; queriesPerSecond: number };

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2] ?? "{}") as PgliteMemoryInput;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-pglite-memory-"));
  try {
    const postgresqlconf = input.leanSettings ? EMBEDDED_POSTGRES_SETTINGS : ["log_startup_progress_interval = 0"];
    if (!input.initdbHere) {
      // The cluster is made by a process that then exits (as lib/db/adapters.ts does now).
      const { execFileSync } = await import("node:child_process");
      execFileSync(process.execPath, [
        "-e",
        `require("@electric-sql/pglite").PGlite.create({ dataDir: process.argv[1] }).then((db) => db.close())`,
        dataDir,
      ]);
    }
    if (input.liftoffOnly) v8.setFlagsFromString("--liftoff-only");
    const db = await PGlite.create({ dataDir, postgresqlconf });
    await db.exec("create table t (id serial primary key, k text unique, v text, n integer not null default 0)");
    const startedMs = performance.now();
    for (let i = 0; i < input.queries; i++) {
      // An upsert and two lookups: the shape of a sign-in's lockout, account and device reads and writes.
      const key = `key-${i % 5_000}`;
      await db.query("insert into t (k, v) values ($1, $2) on conflict (k) do update set n = t.n + 1", [key, "x".repeat(200)]);
      await db.query("select * from t where k = $1", [key]);
      await db.query("select count(*) from t where n > $1", [i % 7]);
    }
    const queriesPerSecond = (input.queries * 3) / ((performance.now() - startedMs) / 1000);
    (globalThis as { gc?: () => void }).gc?.();
    const output: PgliteMemoryOutput = {
      rssBytes: process.memoryUsage().rss,
      heapUsedBytes: process.memoryUsage().heapUsed,
      wasmMemoryBytes: db.Module.wasmMemory.buffer.byteLength,
      queriesPerSecond,
    };
    await db.close();
    console.log(JSON.stringify(output));
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});

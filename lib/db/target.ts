import path from "node:path";

/** Where the data lives, decided once from DATABASE_URL. */
export type DatabaseTarget = { kind: "pglite"; dataDir: string } | { kind: "postgres"; url: string };

export const DEFAULT_PGLITE_DIR = ".data/pglite";

/**
 * Unset or empty: embedded PGlite in `.data/pglite`. `pglite:<dir>`: PGlite in that folder
 * (relative to the working directory). `postgres://` or `postgresql://`: a PostgreSQL server.
 * Anything else is refused, naming the variable, rather than guessed at.
 */
export function resolveDatabaseTarget(databaseUrl: string | undefined, cwd: string = process.cwd()): DatabaseTarget {
  const value = databaseUrl?.trim() ?? "";
  if (value === "") return { kind: "pglite", dataDir: path.resolve(cwd, DEFAULT_PGLITE_DIR) };
  if (value.startsWith("pglite:")) {
    const dir = value.slice("pglite:".length).replace(/^\/\/(?=\/)/, "");
    if (dir === "") throw new Error("DATABASE_URL: pglite: needs a folder, for example pglite:.data/pglite");
    return { kind: "pglite", dataDir: path.resolve(cwd, dir) };
  }
  if (/^postgres(ql)?:\/\//.test(value)) {
    try {
      new URL(value);
    } catch {
      throw new Error("DATABASE_URL: not a valid postgres:// URL");
    }
    return { kind: "postgres", url: value };
  }
  throw new Error("DATABASE_URL: expected empty (embedded PGlite), pglite:<folder> or postgres://…");
}

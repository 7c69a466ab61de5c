import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";

export type TestDatabase = { url: string; dispose(): Promise<void> };

export async function freshPglite(): Promise<TestDatabase> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-pglite-"));
  return { url: `pglite:${dir}`, dispose: async () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The PostgreSQL of this machine when TEST_DATABASE_URL is set. Without it the suite is skipped
 * locally, but fails under CI=true: a missing service must not pass as green.
 */
export function postgresUrl(): string | undefined {
  const url = process.env.TEST_DATABASE_URL;
  if (!url && process.env.CI === "true") throw new Error("TEST_DATABASE_URL must be set when CI=true");
  return url;
}

/**
 * A throwaway database on the server, dropped afterwards, so runs never share state. Its name
 * starts with `prefix` (the bench's are its own, so that a run can drop what a killed one left).
 * Each admin connection is closed whatever happens, so a failure leaves no client open.
 */
export async function freshPostgres(baseUrl: string, prefix = "gatehouse_test_"): Promise<TestDatabase> {
  const name = `${prefix}${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  try {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end().catch(() => {});
  }
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    dispose: async () => {
      const client = new pg.Client({ connectionString: baseUrl });
      try {
        await client.connect();
        // A pool that has just ended may still have backends on their way out; FORCE would kill
        // them, and the dying client then raises 57P01 as an unhandled error in the test run.
        for (let i = 0; i < 50; i++) {
          const { rows } = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1", [name]);
          if (rows[0]!.n === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end().catch(() => {});
      }
    },
  };
}

import { describe } from "vitest";
import { freshPglite, freshPostgres, postgresUrl, type TestDatabase } from "./databases";
import { redisUrl } from "./redis";

/** The databases a suite runs on: one vitest project each (vitest.config.mts sets `TEST_DATABASE_KIND`). */
export type DatabaseKind = "pglite" | "postgres";

/** What a suite is handed: the label its titles carry, a fresh database per call, and which kind. */
export type SuiteTarget = { label: string; makeDatabase: () => Promise<TestDatabase>; kind: DatabaseKind; redisUrl?: string };

/**
 * Registers `suite` on the database of the vitest project running this file: embedded PGlite in
 * the `pglite` project, this machine's PostgreSQL in the `postgres` project. A suite that needs a
 * service the machine lacks is registered anyway and listed as skipped (under CI=true the URL
 * helpers throw instead). `needs: ["redis"]` asks for Redis beside PostgreSQL.
 */
export function onEachDatabase(title: string, suite: (target: SuiteTarget) => void, options: { needs?: "redis"[] } = {}): void {
  const kind = databaseKind();
  if (kind === "pglite") {
    suite({ label: "embedded PGlite", makeDatabase: freshPglite, kind });
    return;
  }
  const needsRedis = options.needs?.includes("redis") === true;
  const url = postgresUrl();
  const redis = needsRedis ? redisUrl() : undefined;
  const needed = needsRedis ? "TEST_DATABASE_URL, TEST_REDIS_URL" : "TEST_DATABASE_URL";
  describe.skipIf(!url || (needsRedis && !redis))(`${title} on PostgreSQL (needs ${needed})`, () => {
    // Registered either way: without the service its tests are listed as skipped.
    suite({ label: "PostgreSQL", makeDatabase: () => freshPostgres(url!), kind, ...(redis ? { redisUrl: redis } : {}) });
  });
}

function databaseKind(): DatabaseKind {
  const kind = process.env.TEST_DATABASE_KIND;
  if (kind === "pglite" || kind === "postgres") return kind;
  throw new Error(
    "TEST_DATABASE_KIND is unset: run database suites through a vitest project (pglite or postgres), e.g. `npx vitest run --project pglite`",
  );
}

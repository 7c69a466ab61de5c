import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { afterAll, describe, expect, it } from "vitest";
import { applyMigrations, MIGRATIONS_DIR, type Transactional } from "./migrate";

const MIGRATION = "20261130060000_browser_sessions";

describe(`migration ${MIGRATION}`, () => {
  const before = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-migrations-"));
  afterAll(() => fs.rmSync(before, { recursive: true, force: true }));

  it("gives refresh tokens that exist their family's start and a 90-day end, never extending a token", async () => {
    // Every migration before this one, as a database already in production has them.
    for (const name of fs.readdirSync(MIGRATIONS_DIR).filter((entry) => entry < MIGRATION && !entry.endsWith(".toml"))) {
      fs.cpSync(path.join(MIGRATIONS_DIR, name), path.join(before, name), { recursive: true });
    }
    const db = new PGlite();
    const transaction: Transactional = (work) =>
      db.transaction((tx) =>
        work({
          exec: async (sql) => void (await tx.exec(sql)),
          query: async <T>(sql: string, params: unknown[]) => (await tx.query<T>(sql, params)).rows,
        }),
      );
    await applyMigrations(transaction, before);
    // The tokens' account: later migrations delete rows whose account is gone.
    await db.exec(
      `INSERT INTO "User" (id, email, "passwordHash", "updatedAt") VALUES ('22222222-2222-4222-8222-222222222222', 'owner@example.com', 'x', now())`,
    );
    await db.exec(`INSERT INTO "RefreshToken" (id, "tokenHash", "familyId", "userId", "createdAt", "expiresAt") VALUES
      (gen_random_uuid(), 'old-rotated', '11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222', now() - interval '100 days', now() - interval '70 days'),
      (gen_random_uuid(), 'old-live', '11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222', now() - interval '80 days', now() + interval '20 days'),
      (gen_random_uuid(), 'young', '33333333-3333-4333-8333-333333333333', '22222222-2222-4222-8222-222222222222', now() - interval '1 day', now() + interval '29 days')`);

    // This one first, then any later ones.
    expect((await applyMigrations(transaction))[0]).toBe(MIGRATION);
    const { rows } = await db.query<{ tokenHash: string; days: number; left: number; client: string; address: string }>(
      `SELECT "tokenHash", round(extract(epoch FROM "familyExpiresAt" - "familyCreatedAt") / 86400)::int AS days,
              round(extract(epoch FROM "expiresAt" - now()) / 86400)::int AS left, client, address
       FROM "RefreshToken" ORDER BY "tokenHash"`,
    );
    expect(rows).toEqual([
      // The old family started 100 days ago: its live token, due in 20 days, ends with the family 10 days ago.
      { tokenHash: "old-live", days: 90, left: -10, client: "API client", address: "unknown" },
      { tokenHash: "old-rotated", days: 90, left: -70, client: "API client", address: "unknown" },
      { tokenHash: "young", days: 90, left: 29, client: "API client", address: "unknown" },
    ]);
    await db.exec(`SELECT 1 FROM "BrowserSession" LIMIT 0`);
    await db.close();
  });
});

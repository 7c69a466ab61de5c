import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": fileURLToPath(new URL(".", import.meta.url)) } },
  test: {
    environment: "node",
    // Integration tests open real databases; give them room on a 2-core machine.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: {
      NEXTAUTH_SECRET: randomBytes(32).toString("hex"),
      ARGON2_PROFILE: "test",
      LOG_LEVEL: "silent",
      ALTCHA_MAX_COUNTER: "50",
      // Mail from tests without an SMTP server of their own goes to a throwaway outbox, not the repository's .data/.
      MAIL_OUTBOX_DIR: path.join(os.tmpdir(), `gatehouse-test-outbox-${randomBytes(4).toString("hex")}`),
    },
    // One project per database for the integration suites (`*.suite.ts` register themselves through
    // tests/helpers/each-database.ts), so a suite is written once and runs on both; every project
    // takes the settings above (`extends`) and adds only its own.
    projects: [
      { extends: true, test: { name: "unit", include: ["lib/**/*.test.ts", "tests/**/*.test.ts"] } },
      ...(["pglite", "postgres"] as const).map((kind) => ({
        extends: true as const,
        test: { name: kind, include: ["tests/integration/*.suite.ts"], env: { TEST_DATABASE_KIND: kind } },
      })),
    ],
  },
});

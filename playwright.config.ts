import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { defineConfig, devices } from "@playwright/test";

const port = Number(process.env.E2E_PORT ?? 3210);
const baseURL = `http://127.0.0.1:${port}`;

// A fresh embedded database for every run. Workers re-read this file; the environment
// variable makes them agree with the runner instead of creating folders of their own.
process.env.E2E_DATA_DIR ??= fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-e2e-"));
// No SMTP server: every server of the run writes its mail here, and the tests read it back.
process.env.E2E_OUTBOX_DIR ??= `${process.env.E2E_DATA_DIR}-outbox`;
process.env.E2E_SECRET ??= randomBytes(32).toString("hex");
// Above the number of failures the rate-limit tests cause, so the two layers can be seen apart.
process.env.E2E_LOCKOUT_THRESHOLD ??= "15";

export default defineConfig({
  testDir: "e2e",
  fullyParallel: true,
  forbidOnly: !!process.env.CI,
  retries: process.env.CI ? 1 : 0,
  workers: 2,
  reporter: process.env.CI ? [["list"]] : [["list"], ["html", { open: "never" }]],
  use: {
    baseURL,
    trace: "on-first-retry",
    launchOptions: {
      // Debian's Chromium: Playwright's own browser download cannot run on this network.
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    },
  },
  projects: [{ name: "chromium", use: { ...devices["Desktop Chrome"] } }],
  webServer: {
    // The production build (`next build` runs first in `npm run test:e2e`).
    command: "node server.mjs",
    url: `${baseURL}/api/health`,
    reuseExistingServer: !process.env.CI,
    timeout: 120_000,
    stdout: "pipe",
    env: {
      NODE_ENV: "production",
      PORT: String(port),
      HOST: "127.0.0.1",
      DATABASE_URL: `pglite:${process.env.E2E_DATA_DIR}`,
      NEXTAUTH_SECRET: process.env.E2E_SECRET,
      NEXTAUTH_URL: baseURL,
      // A local http:// test server: session cookies cannot be Secure here.
      ALLOW_INSECURE_COOKIES: "true",
      LOG_LEVEL: "warn",
      // The test runner is the trusted proxy: e2e/helpers/serverGrid.ts gives each test its own
      // client address through X-Forwarded-For, so parallel workers never share a bucket.
      TRUSTED_PROXIES: "127.0.0.1,::1",
      // Short windows so a test can wait out a refusal: one sign-in token every 6 s.
      RATE_LIMIT_SIGN_IN_USERNAME: "5/30s",
      // Above the failures one test's address causes, as the lockout's threshold is: the layers the
      // suite tests stay apart. e2e/mailbox-first.spec.ts runs the shipped 5 on an instance of its own.
      RATE_LIMIT_NEW_DEVICE_CHECKS: "50/15m",
      LOCKOUT_THRESHOLD: process.env.E2E_LOCKOUT_THRESHOLD,
      LOCKOUT_BASE_SECONDS: "30",
      ALTCHA_MAX_COUNTER: "2000",
      MAIL_OUTBOX_DIR: process.env.E2E_OUTBOX_DIR,
      // The pseudo-locale xx for e2e/languages.spec.ts (a visitor chooses it only by its cookie).
      I18N_PSEUDO_LOCALE: "true",
      // The drills flood this shared server while other tests browse it as new visitors, whom the
      // door would rightly hold (a 5 s expectation then fails); e2e/door.spec.ts runs the door on an
      // instance of its own, and the bench's drills with its defaults.
      DOOR_BUSY_SHARE: "1",
    },
  },
});

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { PASSWORD, uniqueEmail } from "./helpers/accounts";
import { virtualAuthenticator } from "./helpers/factors";
import { startDevServer, type Instance } from "./helpers/instances";

// The newcomer's first minute, on `npm run dev` itself rather than the production build: React's
// Strict Mode (effects run twice) and on-demand compilation exist only here. The server gets its
// own free port, data folder and outbox, and neither NEXTAUTH_URL nor NEXTAUTH_SECRET, as after
// a fresh clone; its emailed links must then name the port it listens on, at localhost (where
// browsers make passkeys: the walk adds one), not 127.0.0.1.
test.describe.configure({ mode: "serial" });

// Each page compiles on its first request (seconds apiece on a busy machine).
const COMPILE_MS = 90_000;

let server: Instance;
let folder: string;

test.beforeAll(async () => {
  test.setTimeout(180_000);
  // Next allows one development server per folder (.next/dev/lock): a developer's own `npm run dev` would stop this one.
  if (fs.existsSync(".next/dev/lock")) {
    const lock = fs.readFileSync(".next/dev/lock", "utf8");
    const pid = Number((/"pid":\s*(\d+)/.exec(lock) ?? [])[1]);
    const alive =
      pid > 0 &&
      (() => {
        try {
          return process.kill(pid, 0);
        } catch {
          return false;
        }
      })();
    if (alive) throw new Error(`a development server (pid ${pid}) already runs in this folder: stop it, then run this spec`);
  }
  folder = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-dev-"));
  server = await startDevServer({ DATABASE_URL: `pglite:${path.join(folder, "data")}`, MAIL_OUTBOX_DIR: path.join(folder, "outbox") });
  // Compile the pages of the walk in parallel before it starts, rather than one by one inside it.
  await Promise.all(
    [
      "/register",
      "/dev/outbox",
      "/verify-email",
      "/account",
      "/sign-in",
      "/",
      "/api/account/passkeys/options",
      "/api/account/passkeys",
    ].map((page) =>
      fetch(`${server.baseURL}${page}`, { redirect: "manual", signal: AbortSignal.timeout(COMPILE_MS) }).catch(() => undefined),
    ),
  );
});

test.afterAll(async () => {
  expect(await server?.stop()).toBe(0);
  if (folder) fs.rmSync(folder, { recursive: true, force: true });
});

test("register, confirm from /dev/outbox, arrive signed in, see the account page, sign out", async ({ page }) => {
  test.setTimeout(240_000);
  page.setDefaultTimeout(COMPILE_MS);
  page.setDefaultNavigationTimeout(COMPILE_MS);
  const email = uniqueEmail("newcomer");
  // It says where it is, at localhost; and sends a browser that opened 127.0.0.1 there.
  const { port } = new URL(server.baseURL);
  expect(server.baseURL).toBe(`http://localhost:${port}`);
  expect(server.output()).toContain(`Gatehouse (development) listening on http://localhost:${port}`);
  await page.goto(`http://127.0.0.1:${port}/register`);
  await expect(page).toHaveURL(`${server.baseURL}/register`);

  await page.goto(`${server.baseURL}/register`);
  await page.locator('form[data-hydrated="true"]').waitFor();
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByTestId("register-sent")).toBeVisible({ timeout: COMPILE_MS });

  // The outbox page, as the README tells a newcomer to open it; mail is written after the answer.
  const message = page.getByTestId("outbox-message").filter({ has: page.getByTestId("outbox-to").getByText(email, { exact: true }) });
  await expect(async () => {
    await page.goto(`${server.baseURL}/dev/outbox`);
    await expect(message).toHaveCount(1, { timeout: 1_000 });
  }).toPass({ timeout: 30_000 });
  const link = message.getByRole("link").first();
  // NEXTAUTH_URL is unset: the link names the address this server listens on, not localhost:3000.
  expect(await link.getAttribute("href")).toMatch(new RegExp(`^${server.baseURL}/verify-email#token=[A-Za-z0-9_-]{43}$`));
  await link.click();

  // Strict Mode ran the page's effects twice: the token must still be there, and gone from the address bar.
  await expect(page.locator('form[data-hydrated="true"], [data-testid="link-missing"]')).toBeVisible();
  await expect(page.getByTestId("link-missing")).toHaveCount(0);
  await expect(page).toHaveURL(`${server.baseURL}/verify-email`);
  await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
  await page.getByRole("button", { name: "Confirm my address" }).click();

  // Confirming signs the owner in: no second password prompt.
  await expect(page).toHaveURL(`${server.baseURL}/account?notice=email_verified`, { timeout: COMPILE_MS });
  await expect(page.getByTestId("account-email")).toHaveText(email);

  // A passkey, with Chromium's virtual authenticator: the RP ID is localhost, which browsers accept.
  const { cdp, authenticatorId } = await virtualAuthenticator(page);
  await expect(page.getByTestId("passkeys-unavailable")).toHaveCount(0);
  await page.getByRole("button", { name: "Add a passkey" }).click();
  await expect(page.getByTestId("passkey")).toHaveCount(1, { timeout: COMPILE_MS });
  await expect(page.getByTestId("passkeys-error-message")).toBeEmpty();
  expect((await cdp.send("WebAuthn.getCredentials", { authenticatorId })).credentials).toHaveLength(1);
  // Nothing to warn about at localhost.
  expect(server.output()).not.toContain("passkeys_unavailable");

  // The header's button is disabled until the page has hydrated, which the dev server's first
  // compile of /account can delay past a click's timeout; and signing out is the first use of
  // /api/auth/signout, compiled then. So: click until the sign-out shows.
  const signOut = page.getByRole("button", { name: "Sign out", exact: true });
  await expect(async () => {
    if (await signOut.isVisible()) await signOut.click({ timeout: 2_000 });
    await expect(page.getByTestId("who")).toContainText("You are not signed in", { timeout: 10_000 });
  }).toPass({ timeout: COMPILE_MS });
  await page.goto(`${server.baseURL}/account`);
  await expect(page).toHaveURL(/\/sign-in\?callbackUrl=%2Faccount/);
});

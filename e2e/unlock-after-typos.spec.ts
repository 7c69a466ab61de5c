import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { request as playwrightRequest } from "@playwright/test";
import { PASSWORD, signInThroughUi, uniqueEmail, waitForForm } from "./helpers/accounts";
import { startInstance, sharedSecrets, type Instance } from "./helpers/instances";
import { mailTo } from "./helpers/outbox";
import { expect, registerApi, test } from "./helpers/serverGrid";

const TYPOS = 5;

// Issue 55: the owner who mistyped. Five typos from one browser bring the "sign-in is paused" mail,
// whose link lets that browser sign in again at once; the right password then opens the account
// with no refusal and no wait, whatever limit the owner's own typos spent. A server of its own with
// the shipped lockout and sign-in limits (the suite's server raises the one and shortens the other).
test.describe("the unlock link after the owner's own typos", () => {
  let instance: Instance | undefined;
  let dataDir: string;

  test.beforeAll(async () => {
    test.setTimeout(90_000);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-typos-"));
    instance = await startInstance({ ...sharedSecrets(), DATABASE_URL: `pglite:${dataDir}` });
  });

  test.afterAll(async () => {
    await instance?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test("five typos, the mailed link, then the right password signs in at once", async ({ page, clientAddress }) => {
    test.setTimeout(60_000);
    const baseURL = instance!.baseURL;
    const email = uniqueEmail("typist");
    // Registered and confirmed from another client: this browser is new to the account.
    const setup = await playwrightRequest.newContext({ baseURL, extraHTTPHeaders: { "X-Forwarded-For": "10.252.0.1" } });
    try {
      expect((await registerApi(setup, email, PASSWORD)).status()).toBe(202);
    } finally {
      await setup.dispose();
    }

    // The owner's browser, at one address (the fixture's X-Forwarded-For), types a wrong password five times.
    await page.goto(`${baseURL}/sign-in`);
    const answered = page.getByTestId("sign-in-error").or(page.getByRole("heading", { name: "Confirm this device" }));
    for (let i = 0; i < TYPOS; i++) {
      // After a typo on a username under attack, a new browser is asked for a code that never comes: back to the form.
      const again = page.getByRole("button", { name: "Sign in again" });
      if (await again.isVisible()) {
        await again.click();
        await waitForForm(page);
      }
      await signInThroughUi(page, email, `not the password ${i + 1}`);
      await expect(answered, `typo ${i + 1} answered`).toBeVisible();
    }

    const paused = await mailTo(email, /sign-in to your .* account is paused/i);
    expect(paused.link).toContain(`${baseURL}/unlock#token=`);
    // What the page shows after the typos points at that mail (not only at the address confirmation).
    await expect
      .soft(page.locator("main"), "the banner after the typos mentions the mailed link")
      .toContainText(/emailed (you )?a (new )?link/i);

    // The link's page, in the same browser: the confirm button makes it a known device of the account.
    await page.goto(paused.link);
    await page.getByRole("button", { name: "Let this browser sign in" }).click();
    await expect(page).toHaveURL(/\/sign-in\?done=unlocked/);

    // The right password, once: in at once, no 429 and no countdown.
    await waitForForm(page);
    const startedMs = Date.now();
    const [answer] = await Promise.all([
      page.waitForResponse((response) => response.url().includes("/api/auth/callback/credentials")),
      (async () => {
        await page.getByLabel("Email").fill(email);
        await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
        await page.getByRole("button", { name: "Sign in", exact: true }).click();
      })(),
    ]);
    const body = (await answer.json().catch(() => ({}))) as Record<string, unknown>;
    expect(answer.status(), `the right password after the unlock link from ${clientAddress}: ${JSON.stringify(body)}`).toBe(200);
    // Signed in: the page leaves the sign-in form for the callback ("/"), and the account page is theirs.
    await expect(page).not.toHaveURL(/\/sign-in/, { timeout: 10_000 });
    expect(Date.now() - startedMs).toBeLessThan(10_000);
    await page.goto(`${baseURL}/account`);
    await expect(page.getByTestId("account-email")).toHaveText(email);
  });
});

import { uniqueEmail, waitForForm } from "./helpers/accounts";
import { virtualAuthenticator } from "./helpers/factors";
import { expectNoAxeViolations, useLanguage } from "./helpers/layout";
import { startInstance, sharedSecrets, type Instance } from "./helpers/instances";
import { mailTo } from "./helpers/outbox";
import { expect, test } from "./helpers/serverGrid";

const NEW_PASSWORD = "a passphrase set much later";

/**
 * "Create an account with a passkey" (issue 57, item 6) in real Chromium, with its virtual
 * authenticator: the address only on the register page, the emailed link's page makes the passkey
 * and signs in, no password is ever set; later "Set a password" from the account page. WebAuthn
 * needs a domain RP ID, so this spec runs its own instance at http://localhost:PORT.
 */
test.describe("start with a passkey", () => {
  test.describe.configure({ mode: "serial", timeout: 120_000 });
  let instance: Instance;

  test.beforeAll(async () => {
    test.setTimeout(90_000);
    instance = await startInstance(
      { ...sharedSecrets(), DATABASE_URL: `pglite:${process.env.E2E_DATA_DIR}-passkey-start` },
      { hostname: "localhost" },
    );
  });

  test.afterAll(async () => {
    await instance?.stop();
  });

  test("signs up with only a passkey, from the pages, then sets a password", async ({ browser }) => {
    const email = uniqueEmail("passkey-start");
    const context = await browser.newContext({ baseURL: instance.baseURL });
    const page = await context.newPage();
    await virtualAuthenticator(page);

    await page.goto("/register");
    await waitForForm(page);
    await page.getByRole("button", { name: "Create an account with a passkey" }).click();
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Create an account with a passkey");
    await expect(page.getByLabel("Password", { exact: true })).toHaveCount(0);
    await expectNoAxeViolations(page);
    await page.getByLabel("Email").fill(email);
    await page.getByRole("button", { name: "Email me the link" }).click();
    await expect(page.getByTestId("register-sent")).toBeVisible();
    await expectNoAxeViolations(page);

    const { link } = await mailTo(email, /finish creating your/i);
    await page.goto(link);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Create your passkey");
    await waitForForm(page);
    await expectNoAxeViolations(page);
    await page.getByRole("button", { name: "Create my passkey" }).click();
    await expect(page).toHaveURL(/\/account$/, { timeout: 30_000 });
    await expect(page.getByTestId("account-email")).toHaveText(email);
    await expect(page.getByTestId("passkey")).toHaveCount(1);

    // No password: the account page offers to set one (the passkey's sign-in is fresh enough).
    await expect(page.getByRole("heading", { name: "Set a password" })).toBeVisible();
    await expectNoAxeViolations(page);
    await page.getByLabel("New password").fill(NEW_PASSWORD);
    await page.getByRole("button", { name: "Set a password" }).click();
    await expect(page.getByTestId("account-notice")).toContainText("Your password is set");
    await expect(page.getByRole("heading", { name: "Change password" })).toBeVisible();
    await context.close();
  });

  test("the register page and the link's page in German", async ({ browser }) => {
    const email = uniqueEmail("passkey-start-de");
    const context = await browser.newContext({ baseURL: instance.baseURL });
    const page = await context.newPage();
    await useLanguage(page, "de", instance.baseURL);
    await page.goto("/register");
    await waitForForm(page);
    await page.getByRole("button", { name: "Konto mit einem Passkey erstellen" }).click();
    await page.getByLabel("E-Mail-Adresse").fill(email);
    await page.getByRole("button", { name: "Link per E-Mail senden" }).click();
    await expect(page.getByTestId("register-sent")).toBeVisible();
    const { link } = await mailTo(email, /Schließen Sie die Einrichtung/);
    await page.goto(link);
    await expect(page.getByRole("heading", { level: 1 })).toHaveText("Passkey erstellen");
    await expect(page.getByRole("button", { name: "Meinen Passkey erstellen" })).toBeVisible();
    await context.close();
  });
});

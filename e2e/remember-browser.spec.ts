import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { PASSWORD, signInThroughUi } from "./helpers/accounts";
import { codeAt } from "./helpers/factors";
import { expect, test } from "./helpers/serverGrid";
import { accountOnPage } from "./helpers/sessions";

const NEW_PASSWORD = "a brand new passphrase of mine";

async function signOut(page: Page) {
  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await expect(page.getByTestId("who")).toContainText("You are not signed in");
}

async function expectNoViolations(page: Page, state: string) {
  const results = await new AxeBuilder({ page }).analyze();
  const violations = results.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((node) => node.target.join(" ")).join(", ")}`);
  expect(violations, `axe on ${state}`).toEqual([]);
}

/**
 * "Remember this browser" (issue 57, item 5) in Chromium: offered beside the app's code, ticked,
 * then the next sign-in on this browser is the password alone (recorded in the events); a password
 * change ends it, and the step is asked again (in German here, so the box is seen translated).
 */
test("remember this browser: the next sign-in skips the second step, until the password changes", async ({ page, newClient }) => {
  test.setTimeout(150_000);
  const email = await accountOnPage(page, newClient, "remember");

  await page.getByRole("button", { name: "Set up an authenticator app" }).click();
  const secret = (await page.getByTestId("totp-secret").textContent())!.replace(/\s/g, "");
  // The previous step's code, so that this step's is left for the sign-in below.
  await page.getByLabel("Code", { exact: true }).fill(codeAt(secret, Date.now() - 30_000));
  await page.getByRole("button", { name: "Turn on" }).click();
  await expect(page.getByTestId("recovery-codes").locator("code")).toHaveCount(10);
  await page.getByRole("button", { name: "I have saved them" }).click();
  await expect(page.getByTestId("totp-status")).toContainText("On");

  await signOut(page);
  await page.goto("/sign-in?callbackUrl=%2Faccount");
  await signInThroughUi(page, email);
  await expect(page.getByTestId("second-step")).toBeVisible();
  const remember = page.getByLabel("Remember this browser for 30 days");
  await expect(remember).not.toBeChecked();
  await expect(remember).toHaveAccessibleDescription(/password is still asked/);
  await expectNoViolations(page, "the second step with the box");
  // A recovery code never remembers: its form has no box.
  await page.getByRole("button", { name: "Use a recovery code" }).click();
  await expect(page.getByLabel("Remember this browser for 30 days")).toHaveCount(0);
  await page.getByRole("button", { name: "Use your authenticator app" }).click();
  await page.getByLabel("Remember this browser for 30 days").check();
  await page.getByLabel("Code", { exact: true }).fill(codeAt(secret, Date.now()));
  await page.getByRole("button", { name: "Verify" }).click();
  await expect(page).toHaveURL(/\/account$/);
  await expect(page.getByTestId("security-events")).toContainText("Browser remembered");

  // The password alone on this browser: straight to the account, no second step.
  await signOut(page);
  await page.goto("/sign-in?callbackUrl=%2Faccount");
  await signInThroughUi(page, email);
  await expect(page).toHaveURL(/\/account$/);
  await expect(page.getByTestId("account-email")).toHaveText(email);
  await expect(page.getByTestId("security-events")).toContainText("Signed in on a remembered browser");
  // A second one too (the secret rotated with the device cookie, the browser holds the new pair).
  await signOut(page);
  await page.goto("/sign-in?callbackUrl=%2Faccount");
  await signInThroughUi(page, email);
  await expect(page).toHaveURL(/\/account$/);

  // A password change ends it.
  await page.locator('form[data-testid="change-password"][data-hydrated="true"]').waitFor();
  await page.getByLabel("Current password").fill(PASSWORD);
  await page.getByLabel("New password").fill(NEW_PASSWORD);
  await page.getByRole("button", { name: "Change password" }).click();
  await expect(page).toHaveURL(/notice=password_changed/);
  await signOut(page);

  // In German: the step is asked again, and the box says so in German.
  const { hostname } = new URL(page.url());
  await page.context().addCookies([{ name: "gatehouse-locale", value: "de", domain: hostname, path: "/" }]);
  await page.goto("/sign-in?callbackUrl=%2Faccount");
  await page.locator('form[data-hydrated="true"]').waitFor();
  await page.getByLabel("E-Mail-Adresse").fill(email);
  await page.getByLabel("Passwort", { exact: true }).fill(NEW_PASSWORD);
  await page.getByRole("button", { name: "Anmelden", exact: true }).click();
  await expect(page.getByTestId("second-step")).toBeVisible();
  await expect(page.getByLabel("Diesen Browser 30 Tage lang merken")).toBeVisible();
  await expectNoViolations(page, "the second step in German");
});

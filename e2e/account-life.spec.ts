import fs from "node:fs/promises";
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { PASSWORD } from "./helpers/accounts";
import { mailTo } from "./helpers/outbox";
import { expect, signInApi, test } from "./helpers/serverGrid";
import { accountOnPage, otherBrowser } from "./helpers/sessions";

async function expectNoViolations(page: Page, state: string) {
  const results = await new AxeBuilder({ page }).analyze();
  const violations = results.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((node) => node.target.join(" ")).join(", ")}`);
  expect(violations, `axe on ${state}`).toEqual([]);
}

test("the account's life from the pages: forget a device, download my data, delete the account", async ({
  page,
  browser,
  baseURL,
  newClient,
}, testInfo) => {
  const email = await accountOnPage(page, newClient, "life");
  // A second known device: another browser that signed in.
  const other = await otherBrowser(browser, baseURL, testInfo);
  try {
    expect((await signInApi(other.request, email, PASSWORD)).kind).toBe("signed-in");
  } finally {
    await other.close();
  }

  await page.reload();
  const devices = page.getByTestId("known-devices").getByTestId("known-device");
  // This browser, the other one, and whatever the confirmation link made a device of.
  await expect(devices).not.toHaveCount(0);
  const known = await devices.count();
  expect(known).toBeGreaterThanOrEqual(2);
  await expect(devices.and(page.locator('[data-current="true"]'))).toContainText("(this device)");
  await expectNoViolations(page, "known devices");

  // Forget the other browser's device: the list says so at once.
  await devices
    .and(page.locator('[data-current="false"]'))
    .first()
    .getByRole("button", { name: /^Forget device / })
    .click();
  await expect(devices).toHaveCount(known - 1);
  await expect(devices.and(page.locator('[data-current="true"]'))).toContainText("(this device)");
  await expect(page.getByTestId("security-events")).toContainText("Forgot a known device");

  // Download my data: a JSON file of this account, with no secret in it.
  const downloading = page.waitForEvent("download");
  await page.getByRole("button", { name: "Download my data" }).click();
  const download = await downloading;
  expect(download.suggestedFilename()).toMatch(/^account-data-\d{4}-\d\d-\d\d\.json$/);
  const text = await fs.readFile((await download.path())!, "utf8");
  const data = JSON.parse(text) as { account: { email: string }; knownDevices: unknown[] };
  expect(data.account.email).toBe(email);
  expect(data.knownDevices).toHaveLength(known - 1);
  expect(text).not.toMatch(/hash|digest|secret|token/i);

  // Delete account: the address typed, then the button; home, signed out, says so.
  await page.getByLabel("Type your email address to confirm").fill(email);
  await page.getByRole("button", { name: "Delete account" }).click();
  await expect(page).toHaveURL(/\/\?notice=account_deleted$/);
  await expect(page.getByTestId("account-deleted")).toBeVisible();
  await expect(page.getByTestId("who")).toContainText("You are not signed in");
  await expectNoViolations(page, "account deleted");
  expect((await mailTo(email, /account is deleted/)).text).toContain("/register");
  await page.goto("/account");
  await expect(page).toHaveURL(/\/sign-in\?callbackUrl=%2Faccount/);
});

test("a mistyped address deletes nothing and says what to type, in the page's words", async ({ page, newClient }) => {
  const email = await accountOnPage(page, newClient, "typo");
  await page.getByLabel("Type your email address to confirm").fill(`not-${email}`);
  await page.getByRole("button", { name: "Delete account" }).click();
  await expect(page.getByTestId("delete-account-error")).toContainText("Type the email address of your account exactly to confirm.");
  await expectNoViolations(page, "delete refused");
  await page.reload();
  await expect(page.getByTestId("account-email")).toHaveText(email);
});

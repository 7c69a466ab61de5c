import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { PASSWORD, signInThroughUi, uniqueEmail } from "./helpers/accounts";
import { mailTo } from "./helpers/outbox";
import { expect, test } from "./helpers/serverGrid";
import { accountOnPage } from "./helpers/sessions";

// Each test walks two mails and several pages with axe on each: on a loaded machine that takes longer than one page.
test.slow();

async function expectNoViolations(page: Page, state: string) {
  const results = await new AxeBuilder({ page }).analyze();
  const violations = results.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((node) => node.target.join(" ")).join(", ")}`);
  expect(violations, `axe on ${state}`).toEqual([]);
}

/** Asks for the change from the account page: "Change email", "New email", the button. */
async function askForChange(
  page: Page,
  to: string,
  words = { open: "Change email", label: "New email", submit: "Send the confirmation link" },
) {
  await page.getByRole("button", { name: words.open, exact: true }).click();
  await expect(page.getByLabel(words.label)).toBeFocused();
  await page.getByLabel(words.label).fill(to);
  await page.getByRole("button", { name: words.submit }).click();
  await expect(page.getByTestId("email-change-sent")).toContainText(to);
}

test("change email from the pages: the new address confirms, then signs in; the old one is told and does not", async ({
  page,
  newClient,
}) => {
  const from = await accountOnPage(page, newClient, "mover");
  const to = uniqueEmail("moved");
  await expectNoViolations(page, "account page with Change email");
  await askForChange(page, to);
  await expectNoViolations(page, "change email sent");
  // Nothing changed yet.
  await page.reload();
  await expect(page.getByTestId("account-email")).toHaveText(from);

  const told = await mailTo(from, /email address is being changed/);
  expect(told.link).toContain("/undo-email-change#token=");
  const confirm = await mailTo(to, /Confirm your new/);
  expect(confirm.link).toContain("/confirm-email-change#token=");

  // The link's page does nothing until its button is pressed; this browser asked, so it stays signed in.
  await page.goto(confirm.link);
  await expect(page.getByRole("heading", { name: "Confirm your new email address" })).toBeVisible();
  await expectNoViolations(page, "confirm new address page");
  await page.getByRole("button", { name: "Confirm the new address" }).click();
  await expect(page).toHaveURL(/\/account\?notice=email_changed$/);
  await expect(page.getByTestId("account-email")).toHaveText(to);
  await expect(page.getByTestId("security-events")).toContainText("Changed the email address");

  // The link works once.
  await page.goto(confirm.link);
  await page.getByRole("button", { name: "Confirm the new address" }).click();
  await expect(page.getByTestId("link-error")).toBeVisible();
});

test("the old address undoes it from its mail; the page and the sign-in page say what happened", async ({ page, newClient }) => {
  const from = await accountOnPage(page, newClient, "undoer");
  const to = uniqueEmail("undone");
  await askForChange(page, to);
  const undo = await mailTo(from, /email address is being changed/);
  await page.goto(undo.link);
  await expect(page.getByRole("heading", { name: "Undo the change of your email address" })).toBeVisible();
  await expectNoViolations(page, "undo page");
  await page.getByRole("button", { name: "Undo the change" }).click();
  await expect(page).toHaveURL(/\/sign-in\?done=email_change_undone/);
  await expect(page.getByTestId("sign-in-done")).toContainText("every session is signed out");
  expect((await mailTo(from, /Reset your/)).link).toContain("/reset-password#token=");
  // The confirmation link died with the undo.
  const confirm = await mailTo(to, /Confirm your new/);
  await page.goto(confirm.link);
  await page.getByRole("button", { name: "Confirm the new address" }).click();
  await expect(page.getByTestId("link-error")).toBeVisible();
  await page.goto("/sign-in");
  await signInThroughUi(page, to, PASSWORD);
  await expect(page).toHaveURL(/\/sign-in/);
});

test("in German: the form, its answer and the link's page", async ({ page, newClient }) => {
  await accountOnPage(page, newClient, "umzug");
  const { hostname } = new URL(page.url());
  await page.context().addCookies([{ name: "gatehouse-locale", value: "de", domain: hostname, path: "/" }]);
  await page.reload();
  const to = uniqueEmail("neu");
  await askForChange(page, to, { open: "E-Mail ändern", label: "Neue E-Mail", submit: "Bestätigungslink senden" });
  await expect(page.getByTestId("email-change-sent")).toContainText("Posteingang");
  await expectNoViolations(page, "German change email");
  const confirm = await mailTo(to, /new .* email address|neue E-Mail-Adresse/);
  await page.goto(confirm.link);
  await expect(page.getByRole("heading", { name: "Neue E-Mail-Adresse bestätigen" })).toBeVisible();
  await page.getByRole("button", { name: "Neue Adresse bestätigen" }).click();
  await expect(page).toHaveURL(/\/account\?notice=email_changed$/);
  await expect(page.getByTestId("account-notice")).toContainText("Ihre E-Mail-Adresse ist geändert");
  await expect(page.getByTestId("account-email")).toHaveText(to);
});

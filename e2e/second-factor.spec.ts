import type { Page } from "@playwright/test";
import { PASSWORD, registerThroughUi, signInThroughUi, uniqueEmail, waitForForm } from "./helpers/accounts";
import { codeAt } from "./helpers/factors";
import { mailTo, mailsTo } from "./helpers/outbox";
import { expect, test } from "./helpers/serverGrid";

const NEW_PASSWORD = "an entirely different and long passphrase";

async function signOut(page: Page) {
  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await expect(page.getByTestId("who")).toContainText("You are not signed in");
}

async function passwordThenSecondStep(page: Page, email: string, password = PASSWORD) {
  await page.goto("/sign-in?callbackUrl=%2Faccount");
  await signInThroughUi(page, email, password);
  // A right password is not a session: the page asks for the second step.
  await expect(page.getByTestId("second-step")).toBeVisible();
  expect((await page.context().cookies()).some((cookie) => /session-token/.test(cookie.name))).toBe(false);
}

/**
 * An authenticator app in Chromium, end to end: set up from the account page (QR code and key),
 * turned on with a first code, then sign-ins with a code and with a recovery code, a used recovery
 * code refused, and the second step still asked after a password reset.
 */
test("an authenticator app: set up from the page, codes and recovery codes sign in once each, a reset keeps it", async ({ page }) => {
  test.setTimeout(120_000);
  const email = uniqueEmail("totp");
  await registerThroughUi(page, email);
  await page.goto("/sign-in?callbackUrl=%2Faccount");
  await signInThroughUi(page, email);
  await expect(page).toHaveURL(/\/account$/);

  await page.getByRole("button", { name: "Set up an authenticator app" }).click();
  await expect(page.getByTestId("totp-setup")).toBeVisible();
  await expect(page.locator(".qr svg")).toBeVisible();
  const secret = (await page.getByTestId("totp-secret").textContent())!.replace(/\s/g, "");
  expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  // A wrong first code does not turn it on.
  await page.getByLabel("Code", { exact: true }).fill(String((Number(codeAt(secret, Date.now())) + 1) % 1_000_000).padStart(6, "0"));
  await page.getByRole("button", { name: "Turn on" }).click();
  await expect(page.getByTestId("second-factor-error")).toContainText("not right");
  // The previous step's code, so that this step's is left for the sign-in below.
  await page.getByLabel("Code", { exact: true }).fill(codeAt(secret, Date.now() - 30_000));
  await page.getByRole("button", { name: "Turn on" }).click();
  // Shown once, as soon as the first code is accepted.
  await expect(page.getByTestId("recovery-codes").locator("code")).toHaveCount(10);
  const codes = await page.getByTestId("recovery-codes").locator("code").allTextContents();
  await page.getByRole("button", { name: "I have saved them" }).click();
  await expect(page.getByTestId("totp-status")).toContainText("On");
  await expect(page.getByTestId("security-events")).toContainText("Authenticator app turned on");
  await expect
    .poll(async () => (await mailsTo(email)).some((mail) => /second sign-in step was turned on/i.test(mail.subject ?? "")))
    .toBe(true);

  // The password, then a code from the app.
  await signOut(page);
  await passwordThenSecondStep(page, email);
  await page.getByLabel("Code", { exact: true }).fill(codeAt(secret, Date.now()));
  await page.getByRole("button", { name: "Verify" }).click();
  await expect(page).toHaveURL(/\/account$/);
  await expect(page.getByTestId("account-email")).toHaveText(email);

  // The password, then a recovery code; the owner is told.
  await signOut(page);
  await passwordThenSecondStep(page, email);
  await page.getByRole("button", { name: "Use a recovery code" }).click();
  await page.getByLabel("Recovery code", { exact: true }).fill(codes[0]!);
  await page.getByRole("button", { name: "Verify" }).click();
  await expect(page).toHaveURL(/\/account$/);
  await expect(page.getByTestId("recovery-codes-left")).toContainText("9 of 10 left");
  await mailTo(email, /recovery code was used/i);

  // The same recovery code does not work twice.
  await signOut(page);
  await passwordThenSecondStep(page, email);
  await page.getByRole("button", { name: "Use a recovery code" }).click();
  await page.getByLabel("Recovery code", { exact: true }).fill(codes[0]!.toUpperCase());
  await page.getByRole("button", { name: "Verify" }).click();
  await expect(page.getByTestId("second-step-error")).toContainText("not right, or was already used");
  await expect(page).toHaveURL(/\/sign-in/);

  // A password reset from the emailed link leaves the second step on.
  await page.goto("/forgot-password");
  await waitForForm(page);
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: "Send me a link" }).click();
  await expect(page.getByTestId("forgot-sent")).toBeVisible();
  const { link } = await mailTo(email, /reset your/i);
  await page.goto(link);
  await waitForForm(page);
  await page.getByLabel("New password").fill(NEW_PASSWORD);
  await page.getByRole("button", { name: "Set the new password" }).click();
  await expect(page).toHaveURL(/\/sign-in\?done=reset/);
  await passwordThenSecondStep(page, email, NEW_PASSWORD);
  await page.getByLabel("Code", { exact: true }).fill(codeAt(secret, Date.now() + 30_000));
  await page.getByRole("button", { name: "Verify" }).click();
  await expect(page).toHaveURL(/\/account$/);
});

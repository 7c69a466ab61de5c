import { randomBytes } from "node:crypto";
import { expect, type Page } from "@playwright/test";
import { mailTo } from "./outbox";

export function uniqueEmail(prefix = "user"): string {
  return `${prefix}-${randomBytes(5).toString("hex")}@example.com`;
}

export const PASSWORD = "correct horse battery staple";

/**
 * The form is the component's once it has hydrated; before that a submit is the browser's (no-script).
 * An emailed link's page says so once its preview has answered too: the account's line is then in.
 */
export async function waitForForm(page: Page) {
  await page.locator('form[data-hydrated="true"]').waitFor();
}

/** Fills in and sends the registration form. */
export async function submitRegistration(page: Page, email: string, password = PASSWORD) {
  await page.goto("/register");
  await waitForForm(page);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password", { exact: false }).fill(password);
  await page.getByRole("button", { name: "Create account" }).click();
}

/**
 * Registers through the page and confirms the address from the outbox, then leaves the browser
 * as a stranger to the account (no session, no device cookie): an account ready to sign in.
 */
export async function registerThroughUi(page: Page, email: string, password = PASSWORD) {
  await submitRegistration(page, email, password);
  await expect(page.getByTestId("register-sent")).toBeVisible();
  await confirmFromOutbox(page, email, password);
  // Signed out (the session record ends too), and no known-device cookie left behind.
  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await expect(page.getByTestId("who")).toContainText("You are not signed in");
  await page.context().clearCookies();
  await page.goto("/sign-in");
}

/** Opens the verification link from the outbox in `page` and presses its button, as the owner would: it signs them in. */
export async function confirmFromOutbox(page: Page, email: string, password = PASSWORD) {
  const { link } = await mailTo(email, /confirm your email/i);
  await page.goto(link);
  await waitForForm(page);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByRole("button", { name: "Confirm my address" }).click();
  await expect(page).toHaveURL(/\/account\?notice=email_verified$/, { timeout: 30_000 });
  await expect(page.getByTestId("account-email")).toHaveText(email);
}

export async function signInThroughUi(page: Page, email: string, password = PASSWORD) {
  await waitForForm(page);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  // Resolves once the server has answered, so callers see this attempt's result, not the last one's.
  await Promise.all([
    page.waitForResponse((response) => response.url().includes("/api/auth/callback/credentials")),
    page.getByRole("button", { name: "Sign in", exact: true }).click(),
  ]);
}

/**
 * A new browser of a username under attack is asked for the code mailed to the owner ("Confirm this
 * device"): reads the newest code mail from the outbox and enters it, as the owner would.
 */
export async function confirmDeviceFromOutbox(page: Page, email: string) {
  await expect(page.getByRole("heading", { name: "Confirm this device" })).toBeVisible();
  const mail = await mailTo(email, /sign in to .* on a new device/i);
  const code = /enter this code: (\d{6})/.exec(mail.text ?? "")?.[1];
  expect(code, "a 6-digit code in the mail").toMatch(/^\d{6}$/);
  await page.getByLabel("Code", { exact: true }).fill(code!);
  await page.getByRole("button", { name: "Verify" }).click();
}

/** 12 characters zxcvbn rates very strong: enough for an account with another factor, not for one without. */
export const TWELVE = "Xq7#kP2m!vR9";

/** Asks for a reset link from the forgot-password page, signed out: the link from the outbox. */
export async function resetLinkFor(page: Page, email: string): Promise<string> {
  await page.context().clearCookies();
  await page.goto("/forgot-password");
  await waitForForm(page);
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: "Send me a link" }).click();
  await expect(page.getByTestId("forgot-sent")).toBeVisible();
  return (await mailTo(email, /reset your/i)).link;
}

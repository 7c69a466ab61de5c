import { confirmDeviceFromOutbox, PASSWORD, registerThroughUi, signInThroughUi, uniqueEmail } from "./helpers/accounts";
import { mailTo, mailsTo } from "./helpers/outbox";
import type { Browser, Page } from "@playwright/test";
import { expect, test } from "./helpers/serverGrid";

const CODE_MAIL = /sign in to .* on a new device/i;

/** A new account, and a stranger's wrong password on it from a browser of their own: it is under attack from now on. */
async function attackedAccount(page: Page, browser: Browser, prefix: string): Promise<string> {
  const email = uniqueEmail(prefix);
  await registerThroughUi(page, email);
  const stranger = await browser.newPage();
  await stranger.goto("/sign-in");
  await signInThroughUi(stranger, email, "a password stuffed from another site");
  // The username's first failure: the generic answer.
  await expect(stranger.getByTestId("sign-in-error")).toHaveAttribute("data-error", "invalid_credentials");
  await stranger.close();
  return email;
}

/**
 * A new device of an account under attack, in Chromium: after a stranger's wrong password, the
 * owner's right one on a browser with no device cookie gets no session; the page asks for the
 * code mailed to the owner (a field labelled "Code"), the code signs in, and the browser is a
 * known device from then on: the next attack does not ask it again.
 */
test("a new device after a stranger's failure: the emailed code signs in, and the device is known after", async ({ page, browser }) => {
  test.setTimeout(120_000);
  // A stranger, in a browser of their own, tries a wrong password.
  const email = await attackedAccount(page, browser, "device-code");
  expect((await mailsTo(email)).filter((mail) => CODE_MAIL.test(mail.subject ?? ""))).toHaveLength(0);

  await page.goto("/sign-in?callbackUrl=%2Faccount");
  await signInThroughUi(page, email, PASSWORD);
  await expect(page.getByRole("heading", { name: "Confirm this device" })).toBeVisible();
  expect((await page.context().cookies()).some((cookie) => /session-token/.test(cookie.name))).toBe(false);
  const mail = await mailTo(email, CODE_MAIL);
  const code = /enter this code: (\d{6})/.exec(mail.text ?? "")?.[1];
  expect(code).toMatch(/^\d{6}$/);

  // A wrong code first: refused with the tries left, the field cleared.
  await page.getByLabel("Code", { exact: true }).fill(String((Number(code) + 1) % 1_000_000).padStart(6, "0"));
  await page.getByRole("button", { name: "Verify" }).click();
  await expect(page.getByTestId("second-step-error")).toContainText("not right");
  await page.getByLabel("Code", { exact: true }).fill(code!);
  await page.getByRole("button", { name: "Verify" }).click();
  await expect(page).toHaveURL(/\/account$/);
  await expect(page.getByTestId("account-email")).toHaveText(email);
  await expect(page.getByTestId("security-events")).toContainText("waited for the code we emailed");

  // Signed out, then attacked again: this browser is a known device now and goes straight in.
  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await expect(page.getByTestId("who")).toContainText("You are not signed in");
  const again = await browser.newPage();
  await again.goto("/sign-in");
  await signInThroughUi(again, email, "another stuffed password");
  // Any password from a new browser now: the same step, whether it was right or not.
  await expect(again.getByRole("heading", { name: "Confirm this device" })).toBeVisible();
  await again.close();
  await page.goto("/sign-in?callbackUrl=%2Faccount");
  await signInThroughUi(page, email, PASSWORD);
  await expect(page).toHaveURL(/\/account$/);
  expect((await mailsTo(email)).filter((item) => CODE_MAIL.test(item.subject ?? ""))).toHaveLength(1);
});

/**
 * The device step after a typo (issue 55, item 4): it says how soon the code comes and what no
 * mail means; "Resend code" answers a wrong password's step as it answers a right one's (and mails
 * only for the right one, a new code that replaces the last); "Sign in again" keeps the email and
 * puts the cursor in the password.
 */
test("the device step: how soon the code comes, Resend code, and Sign in again keeping the email", async ({ page, browser }) => {
  test.setTimeout(120_000);
  const email = await attackedAccount(page, browser, "device-resend");

  // The owner's typo on a new browser: the step, which says when the code comes and what no mail means.
  await page.goto("/sign-in?callbackUrl=%2Faccount");
  await signInThroughUi(page, email, "the owner's typo");
  await expect(page.getByRole("heading", { name: "Confirm this device" })).toBeVisible();
  await expect(page.getByText(/within a minute/)).toBeVisible();
  // The paragraph is the code field's description in the accessibility tree, heard on landing there.
  await expect(page.getByRole("textbox", { name: "Code", exact: true })).toHaveAccessibleDescription(
    /^This device is new to the account\. If the password was right, .* that link lets this browser sign in at once\.$/,
  );
  await expect(page.getByText(/No email after two minutes\? Then the email address or the password was not right/)).toBeVisible();
  await page.getByRole("button", { name: "Resend code", exact: true }).click();
  await expect(page.getByTestId("code-resent")).toContainText("If the password was right, a new code is on its way");
  // "Sign in again": the email stays, the cursor is in the password.
  await page.getByRole("button", { name: "Sign in again" }).click();
  await expect(page.getByLabel("Email")).toHaveValue(email);
  await expect(page.getByLabel("Password")).toBeFocused();
  expect((await mailsTo(email)).filter((mail) => CODE_MAIL.test(mail.subject ?? ""))).toHaveLength(0);

  // The right password this time: a code, then a new one on "Resend code"; the newest signs in.
  await page.getByLabel("Password").fill(PASSWORD);
  await Promise.all([
    page.waitForResponse((response) => response.url().includes("/api/auth/callback/credentials")),
    page.getByRole("button", { name: "Sign in", exact: true }).click(),
  ]);
  await expect(page.getByRole("heading", { name: "Confirm this device" })).toBeVisible();
  await mailTo(email, CODE_MAIL);
  await page.getByRole("button", { name: "Resend code", exact: true }).click();
  await expect(page.getByTestId("code-resent")).toBeVisible();
  await expect.poll(async () => (await mailsTo(email)).filter((mail) => CODE_MAIL.test(mail.subject ?? "")).length).toBe(2);
  await confirmDeviceFromOutbox(page, email);
  await expect(page).toHaveURL(/\/account$/);
});

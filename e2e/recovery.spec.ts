import {
  confirmFromOutbox,
  PASSWORD,
  resetLinkFor,
  signInThroughUi,
  submitRegistration,
  uniqueEmail,
  waitForForm,
} from "./helpers/accounts";
import { mailsTo, mailTo } from "./helpers/outbox";
import { accountOnPage, otherBrowser } from "./helpers/sessions";
import { expect, registerApi, signInApi, test } from "./helpers/serverGrid";

const NEW_PASSWORD = "a fresh and different passphrase";

test("a person registers, is told to check their email, cannot sign in until confirming with the link and the password, then signs in", async ({
  page,
  request,
}) => {
  const email = uniqueEmail("verify");
  await submitRegistration(page, email, PASSWORD);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Check your email");
  await expect(page.getByTestId("register-sent")).toContainText(email);

  // Opening the link (as a mail scanner does) changes nothing: the account still waits.
  const { link } = await mailTo(email, /confirm your email/i);
  await page.goto(link);
  await expect(page.getByRole("button", { name: "Confirm my address" })).toBeVisible();
  // The token leaves the address bar once the page has read it.
  await expect(page).toHaveURL(/\/verify-email$/);
  // Until then the right password fails like any wrong one (nothing tells a stranger the address was free).
  expect((await signInApi(request, email, PASSWORD)).kind).toBe("invalid");

  // The mailbox alone does not confirm: the password chosen at registration does.
  await page.getByLabel("Password", { exact: true }).fill("not the chosen passphrase");
  await page.getByRole("button", { name: "Confirm my address" }).click();
  await expect(page.getByLabel("Password", { exact: true })).toBeFocused();
  await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
  // Confirming is one step: it signs the owner in and lands on the account page.
  await page.getByRole("button", { name: "Confirm my address" }).click();
  await expect(page).toHaveURL(/\/account\?notice=email_verified$/);
  await expect(page.getByTestId("account-email")).toHaveText(email);
});

test("registering a taken address looks exactly like registering a new one, and tells the owner by email", async ({ page }) => {
  const email = uniqueEmail("taken");
  await submitRegistration(page, email, PASSWORD);
  const firstAnswer = await page.getByTestId("register-sent").textContent();
  await confirmFromOutbox(page, email);
  // Someone else, in a browser of their own.
  await page.context().clearCookies();

  await submitRegistration(page, email, "somebody else's passphrase");
  await expect(page.getByTestId("register-sent")).toHaveText(firstAnswer!);
  await mailTo(email, /you already have an? .* account/i);
});

test("a person forgets the password, resets it from the emailed link, and the session on another browser is gone", async ({
  page,
  browser,
  baseURL,
  newClient,
}, testInfo) => {
  const other = await otherBrowser(browser, baseURL, testInfo);
  const elsewhere = await other.newPage();
  const email = await accountOnPage(elsewhere, newClient, "reset");

  await page.goto("/sign-in");
  await page.getByRole("link", { name: "Forgot password?" }).click();
  await expect(page).toHaveURL(/\/forgot-password$/);
  await waitForForm(page);
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: "Send me a link" }).click();
  await expect(page.getByTestId("forgot-sent")).toContainText("If an account uses that address");

  const { link } = await mailTo(email, /reset your/i);
  await page.goto(link);
  await waitForForm(page);
  // The password rules apply here as at registration.
  await page.getByLabel("New password").fill("short");
  await page.getByRole("button", { name: "Set the new password" }).click();
  await expect(page.getByLabel("New password")).toBeFocused();
  await page.getByLabel("New password").fill(NEW_PASSWORD);
  await page.getByRole("button", { name: "Set the new password" }).click();
  await expect(page).toHaveURL(/\/sign-in\?done=reset/);
  await expect(page.getByTestId("sign-in-done")).toContainText("Your password is changed");

  await signInThroughUi(page, email, NEW_PASSWORD);
  await expect(page.getByTestId("who")).toContainText(`Signed in as ${email}`);
  await elsewhere.goto("/account");
  await expect(elsewhere).toHaveURL(/\/sign-in\?callbackUrl=%2Faccount/);
  // The same link does not work twice.
  await page.goto(link);
  await waitForForm(page);
  await page.getByLabel("New password").fill("yet another long passphrase");
  await page.getByRole("button", { name: "Set the new password" }).click();
  await expect(page.getByTestId("link-error")).toContainText("expired or was already used");
  expect((await mailsTo(email)).some((mail) => /password was reset/i.test(mail.subject ?? ""))).toBe(true);
  await other.close();
});

test("a reset request for an address without an account answers the same and sends nothing", async ({ page }) => {
  const email = uniqueEmail("nobody");
  await page.goto("/forgot-password");
  await waitForForm(page);
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: "Send me a link" }).click();
  await expect(page.getByTestId("forgot-sent")).toContainText("If an account uses that address");
  await page.waitForTimeout(1_000);
  expect(await mailsTo(email)).toHaveLength(0);
});

test("the reset form says it is ready only once the link's account is named, so nothing moves under a press", async ({
  page,
  newClient,
}) => {
  const email = uniqueEmail("steady");
  expect((await registerApi(await newClient(), email, PASSWORD)).status()).toBe(202);
  const link = await resetLinkFor(page, email);
  // The preview's answer held back: the page has hydrated (it asked) and does not know the account yet.
  let asked!: () => void;
  const asking = new Promise<void>((resolve) => (asked = resolve));
  let answer!: () => void;
  const held = new Promise<void>((resolve) => (answer = resolve));
  await page.route("**/api/password/reset/preview", async (route) => {
    asked();
    await held;
    await route.continue();
  });
  await page.goto(link);
  await asking;
  const form = page.locator("form", { has: page.getByLabel("New password") });
  await expect(form).toHaveAttribute("data-hydrated", "false");
  answer();
  await waitForForm(page);
  // Named by the time the form is ready: the line above it is in, and the button stays where it is.
  expect(await page.getByTestId("link-account").textContent()).toContain("•••@example.com");
  const button = page.getByRole("button", { name: "Set the new password" });
  const ready = await button.boundingBox();
  await page.waitForTimeout(500);
  expect(await button.boundingBox()).toEqual(ready);
});

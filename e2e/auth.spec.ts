import { expect, test } from "./helpers/serverGrid";
import { PASSWORD, registerThroughUi, signInThroughUi, uniqueEmail } from "./helpers/accounts";

test("register, sign in, see the account page, sign out", async ({ page }) => {
  const email = uniqueEmail();
  await registerThroughUi(page, email);
  await expect(page.getByText("Your account is ready")).toBeVisible();
  await expect(page.getByLabel("Email")).toHaveValue(email);

  await signInThroughUi(page, email);
  await expect(page).toHaveURL(/\/$/);
  await expect(page.getByTestId("who")).toContainText(`Signed in as ${email}`);

  await page.getByRole("link", { name: "Account" }).first().click();
  await expect(page.getByTestId("account-email")).toHaveText(email);

  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await expect(page.getByTestId("who")).toContainText("You are not signed in");
  await page.goto("/account");
  await expect(page).toHaveURL(/\/sign-in\?callbackUrl=%2Faccount/);
});

test("a wrong password and an unknown account get the same generic error", async ({ page }) => {
  const email = uniqueEmail();
  await registerThroughUi(page, email);

  await signInThroughUi(page, email, `${PASSWORD} but wrong`);
  const error = page.getByTestId("sign-in-error");
  await expect(error).toHaveText("Incorrect email or password.");
  await expect(error).toHaveAttribute("aria-live", "assertive");

  await page.reload();
  await signInThroughUi(page, uniqueEmail("nobody"), PASSWORD);
  await expect(error).toHaveText("Incorrect email or password.");
});

test("the account page sends a signed-out visitor to sign in and back", async ({ page }) => {
  const email = uniqueEmail();
  await registerThroughUi(page, email);
  await page.goto("/account");
  await expect(page).toHaveURL(/\/sign-in\?callbackUrl=%2Faccount/);
  await signInThroughUi(page, email);
  await expect(page).toHaveURL(/\/account$/);
  await expect(page.getByTestId("account-email")).toHaveText(email);
});

test("registration explains invalid fields", async ({ page }) => {
  await page.goto("/register");
  await page.getByLabel("Email").fill("not-an-email");
  await page.getByLabel("Password", { exact: false }).fill("short");
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByTestId("register-error")).toHaveText("Check the highlighted fields.");
  await expect(page.locator("#password-error")).toHaveText("Use at least 12 characters.");
  await expect(page.getByLabel("Email")).toHaveAttribute("aria-invalid", "true");
});

import { expect, test } from "./helpers/serverGrid";
import {
  confirmFromOutbox,
  PASSWORD,
  registerThroughUi,
  signInThroughUi,
  submitRegistration,
  uniqueEmail,
  waitForForm,
} from "./helpers/accounts";

test("register, confirm (which signs in), sign out, sign in again, see the account page, sign out", async ({ page }) => {
  const email = uniqueEmail();
  await submitRegistration(page, email);
  await confirmFromOutbox(page, email);
  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await expect(page.getByTestId("who")).toContainText("You are not signed in");

  await page.goto("/sign-in");
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

test("Sign out pressed while the page's script still loads signs out, not nothing", async ({ page }) => {
  const email = uniqueEmail();
  await submitRegistration(page, email);
  await confirmFromOutbox(page, email);
  // A full page load whose script arrives late, as on a slow link or a busy server: the server's
  // HTML shows "Sign out" before React can answer a click on it.
  await page.route("**/_next/static/chunks/**", async (route) => {
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await route.continue();
  });
  await page.goto("/account", { waitUntil: "commit" });
  // Playwright's click waits for the button to be enabled, not for the page's script.
  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await expect(page.getByTestId("who")).toContainText("You are not signed in");
});

test("a wrong password and an unknown account get the same generic error", async ({ page }) => {
  const email = uniqueEmail();
  await registerThroughUi(page, email);

  await signInThroughUi(page, email, `${PASSWORD} but wrong`);
  const error = page.getByTestId("sign-in-error");
  await expect(error).toHaveText(
    "We could not sign you in with that email and password: check both, or confirm your address first with the link we emailed you.",
  );
  await expect(page.getByTestId("sign-in-error-message")).toHaveAttribute("role", "alert");
  // A wrong password is retyped: cleared, with the cursor in it.
  await expect(page.getByLabel("Password", { exact: true })).toHaveValue("");
  await expect(page.getByLabel("Password", { exact: true })).toBeFocused();

  await page.reload();
  await signInThroughUi(page, uniqueEmail("nobody"), PASSWORD);
  await expect(error).toHaveText(
    "We could not sign you in with that email and password: check both, or confirm your address first with the link we emailed you.",
  );
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

test("registration explains invalid fields in the browser, before any round trip, and focuses the first", async ({ page }) => {
  await page.goto("/register");
  await waitForForm(page);
  const posts: string[] = [];
  page.on("request", (request) => {
    if (request.method() === "POST") posts.push(request.url());
  });
  await page.getByLabel("Email").fill("not-an-email");
  await page.getByLabel("Password", { exact: true }).fill("short");
  await page.getByRole("button", { name: "Create account" }).click();
  const email = page.getByLabel("Email");
  await expect(email).toHaveAttribute("aria-invalid", "true");
  await expect(email).toHaveAccessibleDescription("Enter a valid email address.");
  await expect(email).toBeFocused();
  // The hint and the error are each read once: the label wraps neither.
  await expect(page.getByLabel("Password", { exact: true })).toHaveAccessibleName("Password");
  await expect(page.getByLabel("Password", { exact: true })).toHaveAccessibleDescription(
    "15 to 128 characters, not a common or breached password. A passphrase of several words works well. Use at least 15 characters.",
  );
  expect(posts).toEqual([]);

  await email.fill("someone@example.com");
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByLabel("Password", { exact: true })).toBeFocused();
  await expect(email).not.toHaveAttribute("aria-invalid", /.*/);
  expect(posts).toEqual([]);
});

test("sign-in checks for missing fields in the browser and focuses the first", async ({ page }) => {
  await page.goto("/sign-in");
  await waitForForm(page);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByLabel("Email")).toBeFocused();
  await expect(page.getByLabel("Email")).toHaveAccessibleDescription("Email is required.");
  await expect(page.getByLabel("Password", { exact: true })).toHaveAccessibleDescription("Password is required.");
  await expect(page.getByTestId("sign-in-error")).toHaveAttribute("data-error", "");
});

test("the password toggle shows and hides the password, and says which", async ({ page }) => {
  await page.goto("/sign-in");
  await waitForForm(page);
  const password = page.getByLabel("Password", { exact: true });
  const toggle = page.getByRole("button", { name: "Show password" });
  await password.fill("correct horse");
  await expect(toggle).toHaveAttribute("aria-pressed", "false");
  await expect(toggle).toHaveAttribute("aria-controls", (await password.getAttribute("id"))!);
  await toggle.click();
  await expect(toggle).toHaveAttribute("aria-pressed", "true");
  await expect(password).toHaveAttribute("type", "text");
  await toggle.click();
  await expect(password).toHaveAttribute("type", "password");
});

test("a signed-in visitor to the sign-in and registration pages is sent on", async ({ page }) => {
  const email = uniqueEmail();
  await registerThroughUi(page, email);
  await signInThroughUi(page, email);
  await expect(page.getByTestId("who")).toContainText(`Signed in as ${email}`);
  await page.goto("/sign-in?callbackUrl=%2Faccount");
  await expect(page).toHaveURL(/\/account$/);
  await page.goto("/sign-in?callbackUrl=%2Fsign-in");
  await expect(page).toHaveURL(/\/$/);
  await page.goto("/register");
  await expect(page).toHaveURL(/\/account$/);
});

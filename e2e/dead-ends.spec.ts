import { PASSWORD, signInThroughUi, submitRegistration, uniqueEmail, waitForForm } from "./helpers/accounts";
import { mailsTo, mailTo } from "./helpers/outbox";
import { expect, registerApi, signInApi, test } from "./helpers/serverGrid";

// Nobody gets stuck: every state a person can land in says where to go next.

test("check your email: its own heading, 'Send it again' and 'Use another address'", async ({ page }) => {
  const email = uniqueEmail("resend");
  await submitRegistration(page, email, PASSWORD);
  const heading = page.getByRole("heading", { level: 1 });
  await expect(heading).toHaveText("Check your email");
  await expect(heading).toBeFocused();
  await expect(page.getByTestId("register-sent-to")).toHaveText(email);
  await mailTo(email, /confirm your email/i);

  await page.getByRole("button", { name: "Send it again" }).click();
  await expect(page.getByTestId("resent")).toContainText("we sent it a new confirmation link");
  await expect.poll(async () => (await mailsTo(email)).filter((mail) => /confirm your email/i.test(mail.subject ?? "")).length).toBe(2);

  await page.getByRole("button", { name: "Use another address" }).click();
  await expect(heading).toHaveText("Create an account");
  await expect(page.getByLabel("Email")).toHaveValue("");
  // The form is ready for the other address: not still "Creating account…" from the first.
  const submit = page.locator("form[data-hydrated] button[type=submit]");
  await expect(submit).toHaveText("Create account");
  await expect(submit).not.toHaveAttribute("aria-disabled", "true");
});

test("a field's error goes once it is corrected; the cursor starts in the first empty field; a skip link comes first", async ({ page }) => {
  await page.goto("/register");
  await waitForForm(page);
  await expect(page.getByLabel("Email")).toBeFocused();
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByText("Email is required.")).toBeVisible();
  await expect(page.getByText("Password is required.")).toBeVisible();
  await page.getByLabel("Email").fill("someone@example.com");
  await expect(page.getByText("Email is required.")).toHaveCount(0);
  await expect(page.getByText("Password is required.")).toBeVisible();
  await page.getByLabel("Password", { exact: true }).fill("password");
  // A common password: said once, by the form or the meter, not both in the same words.
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByLabel("Password", { exact: true })).toBeFocused();
  const problem = (await page.locator(".field-error").textContent()) ?? "";
  expect(problem).not.toBe("");
  await expect(page.getByText(problem, { exact: true })).toHaveCount(1);

  // A prefilled email (after confirming: handed over in the tab's sessionStorage, never in the URL) leaves the cursor in the password.
  await page.evaluate(() => sessionStorage.setItem("gatehouse.sign-in-email", "someone@example.com"));
  await page.goto("/sign-in");
  await waitForForm(page);
  await expect(page.getByLabel("Email")).toHaveValue("someone@example.com");
  await expect(page.getByLabel("Password", { exact: true })).toBeFocused();

  // A page without a form (a form's page already starts in its first field): the first Tab stop skips the header.
  await page.goto("/");
  await page.keyboard.press("Tab");
  const skip = page.getByRole("link", { name: "Skip to main content" });
  await expect(skip).toBeFocused();
  await page.keyboard.press("Enter");
  await expect(page.locator("main")).toBeFocused();
});

test("the lock banner points at the emailed link and can send a new one; the unlock page names the account, masked", async ({
  page,
  request,
  newClient,
}) => {
  const email = uniqueEmail("stuck");
  expect((await registerApi(request, email, PASSWORD)).status()).toBe(202);
  for (let i = 0; i < Number(process.env.E2E_LOCKOUT_THRESHOLD); i++) await signInApi(await newClient(), email, "wrong password");
  const lockMail = await mailTo(email, /sign-in to your .* account is paused/i);

  await page.goto("/sign-in");
  await signInThroughUi(page, email, PASSWORD);
  await expect(page.getByTestId("sign-in-error")).toHaveAttribute("data-error", "locked");
  const wayOut = page.getByTestId("lock-way-out");
  await expect(wayOut).toContainText("If this is your account, we've emailed you a link to sign in from this browser.");
  await wayOut.getByRole("button", { name: "Email me a new link" }).click();
  // The same answer for every address; for this locked account a new link is sent (issue 55), which replaces the first.
  await expect(page.getByTestId("unlock-requested")).toContainText("we sent it a new link to sign in from this browser");
  await expect.poll(async () => (await mailsTo(email)).filter((mail) => /account is paused/i.test(mail.subject ?? "")).length).toBe(2);
  const newest = await mailTo(email, /sign-in to your .* account is paused/i);
  expect(newest.link).not.toBe(lockMail.link);

  await page.goto(newest.link);
  await expect(page.getByTestId("link-account")).toHaveText(`This link is for the account ${email[0]}•••@example.com.`);
  await expect(page.getByText("It does not sign you in")).toBeVisible();
  await page.getByRole("button", { name: "Let this browser sign in" }).click();
  await expect(page).toHaveURL(/\/sign-in\?done=unlocked/);
  await expect(page.getByLabel("Password", { exact: true })).toBeFocused();
});

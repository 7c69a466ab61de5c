import AxeBuilder from "@axe-core/playwright";
import { expect, signInApi, test } from "./helpers/serverGrid";
import { PASSWORD } from "./helpers/accounts";
import { accountOnPage, otherBrowser } from "./helpers/sessions";

const NEW_PASSWORD = "a brand new passphrase of mine";

test("change password: the meter says why a password is refused, and the change signs out the other browser", async ({
  page,
  browser,
  baseURL,
  newClient,
}, testInfo) => {
  const email = await accountOnPage(page, newClient, "change");
  const other = await otherBrowser(browser, baseURL, testInfo);
  try {
    expect((await signInApi(other.request, email, PASSWORD)).kind).toBe("signed-in");

    await page.locator('form[data-testid="change-password"][data-hydrated="true"]').waitFor();
    const meter = page.getByTestId("password-strength");
    await page.getByLabel("New password").fill("passwordpassword");
    await expect(meter).toContainText("list of common passwords");
    await page.getByLabel("New password").fill(NEW_PASSWORD);
    await expect(meter).toContainText("Strength:");

    // The page checks the server's rules before the round trip (all but the blocklist)...
    const newPassword = page.getByLabel("New password");
    await page.getByLabel("Current password").fill(PASSWORD);
    await newPassword.fill("aaaaaaaaaaaaaaaa");
    await page.getByRole("button", { name: "Change password" }).click();
    await expect(newPassword).toHaveAccessibleDescription(/repeated/);
    await expect(newPassword).toBeFocused();
    // ...and the server has the last word: the blocklist refuses, with its reason, beside the field.
    await page.getByLabel("Current password").fill(PASSWORD);
    await newPassword.fill("passwordpassword");
    await page.getByRole("button", { name: "Change password" }).click();
    await expect(newPassword).toHaveAccessibleDescription(/list of common passwords/);

    await page.getByLabel("Current password").fill(PASSWORD);
    await page.getByLabel("New password").fill(NEW_PASSWORD);
    await page.getByRole("button", { name: "Change password" }).click();
    await expect(page).toHaveURL(/notice=password_changed/);
    await expect(page.getByTestId("account-notice")).toContainText("Your password is changed");

    expect(await (await other.request.get("/api/auth/session")).json()).toEqual({});
    await page.goto("/account");
    await expect(page.getByTestId("account-email")).toHaveText(email);
    await expect(page.getByTestId("security-events")).toContainText("Password changed");

    const accessibility = await new AxeBuilder({ page })
      .include('[data-testid="browser-sessions"]')
      .include('[data-testid="change-password"]')
      .analyze();
    expect(accessibility.violations).toEqual([]);
  } finally {
    await other.close();
  }
});

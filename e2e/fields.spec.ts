import type { Page } from "@playwright/test";
import { waitForForm, PASSWORD } from "./helpers/accounts";
import { codeAt } from "./helpers/factors";
import { VIEWPORTS, expectAppField, expectNoAxeViolations, expectTarget, useLanguage } from "./helpers/layout";
import { accountOnPage } from "./helpers/sessions";
import { expect, test } from "./helpers/serverGrid";

/** Signs in with the password in the page's language, up to the second step. */
async function toSecondStep(page: Page, email: string, words: { email: string; password: string; submit: string }) {
  await page.goto("/sign-in?callbackUrl=%2Faccount");
  await waitForForm(page);
  await page.getByLabel(words.email).fill(email);
  await page.getByLabel(words.password, { exact: true }).fill(PASSWORD);
  await page.getByRole("button", { name: words.submit, exact: true }).click();
  await expect(page.getByTestId("second-step")).toBeVisible();
}

/**
 * Fields that look like fields, and say what they are for: the authenticator's set-up code and the second step's code are
 * drawn as the app's other fields are, 44 px targets, at a phone's and a laptop's width, in
 * English and German, and axe finds nothing in either state.
 */
test("the authenticator set-up (with a link and a copy button for the phone) and the second step's code", async ({
  page,
  newClient,
  baseURL,
}) => {
  test.setTimeout(120_000);
  const email = await accountOnPage(page, newClient, "fields");

  await page.getByRole("button", { name: "Set up an authenticator app" }).click();
  await expect(page.getByTestId("totp-setup")).toBeVisible();
  const setupCode = page.getByRole("textbox", { name: "Code", exact: true });
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize(viewport);
    await expectAppField(setupCode);
    await expectTarget(page.getByRole("button", { name: "Turn on" }));
  }
  const secret = (await page.getByTestId("totp-secret").textContent())!.replace(/\s/g, "");
  // On a phone, which cannot scan its own screen, a link opens the app; on a laptop the QR code serves.
  const openApp = page.getByRole("link", { name: "Open in your authenticator app" });
  await page.setViewportSize(VIEWPORTS[0]);
  await expect(openApp).toBeVisible();
  await expect(openApp).toHaveAttribute("href", new RegExp(`^otpauth://totp/.*secret=${secret}`));
  await expectTarget(openApp);
  await expectNoAxeViolations(page);
  await page.setViewportSize(VIEWPORTS[1]);
  await expect(openApp).toBeHidden();
  // The key, copied without its spaces.
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: baseURL! });
  await page.getByRole("button", { name: "Copy the key" }).click();
  await expect(page.getByRole("status").filter({ hasText: "Key copied." })).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
  await expectNoAxeViolations(page);
  await setupCode.fill(codeAt(secret, Date.now() - 30_000));
  await page.getByRole("button", { name: "Turn on" }).click();
  await page.getByRole("button", { name: "I have saved them" }).click();
  await expect(page.getByTestId("totp-status")).toContainText("On");
  await page.getByRole("button", { name: "Sign out", exact: true }).click();
  await expect(page.getByTestId("who")).toContainText("You are not signed in");

  for (const [locale, words, code, explained] of [
    [
      "en",
      { email: "Email", password: "Password", submit: "Sign in" },
      "Code",
      "Your password was right. Enter the 6-digit code your authenticator app shows for this account.",
    ],
    [
      "de",
      { email: "E-Mail-Adresse", password: "Passwort", submit: "Anmelden" },
      "Code",
      "Ihr Passwort war richtig. Geben Sie den 6-stelligen Code ein, den Ihre Authenticator-App für dieses Konto anzeigt.",
    ],
  ] as const) {
    await useLanguage(page, locale, baseURL!);
    await toSecondStep(page, email, words);
    await expect(page.locator("html")).toHaveAttribute("lang", locale);
    const answer = page.getByTestId("second-step").getByRole("textbox", { name: code, exact: true });
    // The step's paragraph is the field's description (aria-describedby), as the accessibility tree has it.
    await expect(answer).toHaveAccessibleDescription(explained);
    for (const viewport of VIEWPORTS) {
      await page.setViewportSize(viewport);
      await expectAppField(answer);
    }
    await expectNoAxeViolations(page);
  }
});

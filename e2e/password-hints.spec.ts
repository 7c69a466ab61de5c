import { PASSWORD, resetLinkFor, TWELVE, waitForForm } from "./helpers/accounts";
import { expectNoAxeViolations, useLanguage } from "./helpers/layout";
import { accountOnPage } from "./helpers/sessions";
import { expect, test } from "./helpers/serverGrid";

/**
 * The hints follow the account's real rule. An account without a passkey or a second step is told
 * 15 characters on the reset page, is offered no "Also remove every passkey", and a 12-character
 * password reads too short there, in English and German; a password the server refused never
 * reads as strong beside its error.
 */
test("the reset page of an account without another factor: 15 characters, no passkey option", async ({ page, newClient, baseURL }) => {
  const email = await accountOnPage(page, newClient, "hints-reset");
  const link = await resetLinkFor(page, email);

  for (const [locale, words] of [
    [
      "en",
      {
        field: "New password",
        hint: "15 to 128 characters, not a common or breached password. A passphrase of several words works well.",
        short: "Use at least 15 characters.",
      },
    ],
    [
      "de",
      {
        field: "Neues Passwort",
        hint: "15 bis 128 Zeichen, kein häufiges oder geleaktes Passwort. Eine Passphrase aus mehreren Wörtern eignet sich gut.",
        short: "Verwenden Sie mindestens 15 Zeichen.",
      },
    ],
  ] as const) {
    await useLanguage(page, locale, baseURL!);
    // A new document: from /reset-password, the link alone would only change the fragment.
    await page.goto("about:blank");
    await page.goto(link);
    await waitForForm(page);
    // The preview has named the account: what the page knows of it is in.
    await expect(page.getByTestId("link-account")).toContainText("•••@example.com");
    const field = page.getByLabel(words.field, { exact: true });
    await expect(field).toHaveAccessibleDescription(words.hint);
    await expect(page.getByRole("checkbox")).toHaveCount(0);
    await field.fill(TWELVE);
    await expect(page.getByTestId("password-strength")).toHaveAttribute("data-score", "0");
    await expect(page.getByTestId("password-strength")).toContainText(words.short);
    await expectNoAxeViolations(page);
  }
});

test("a new password the server refused reads as very weak beside its error, not very strong", async ({ page, newClient }) => {
  await accountOnPage(page, newClient, "hints-refused");
  // The current password again: long and strong to zxcvbn, refused only by the server.
  await page.getByLabel("Current password").fill(PASSWORD);
  await page.getByLabel("New password", { exact: true }).fill(PASSWORD);
  await page.getByRole("button", { name: "Change password" }).click();
  const field = page.getByLabel("New password", { exact: true });
  await expect(field).toHaveAttribute("aria-invalid", "true");
  await expect(field).toHaveAccessibleDescription(/Choose a password different from your current one\.$/);
  const meter = page.getByTestId("password-strength");
  await expect(meter).toHaveAttribute("data-score", "0");
  await expect(meter).not.toContainText("strong");
  await expectNoAxeViolations(page);
  // Another password is measured again.
  await field.fill(`${PASSWORD} and more`);
  await expect(meter).toHaveAttribute("data-score", "4");
});

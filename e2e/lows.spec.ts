import { expectNoAxeViolations, useLanguage } from "./helpers/layout";
import { expect, test } from "./helpers/serverGrid";

/**
 * The small things a review found. /unlock without its token: only "This link is incomplete",
 * not the paragraphs about an account's paused sign-in above it, in English and German.
 */
test("/unlock without a token says only that the link is incomplete", async ({ page, baseURL }) => {
  for (const [locale, words] of [
    ["en", { heading: "Sign in on this browser", incomplete: /^This link is incomplete\./, held: /Your password held/ }],
    ["de", { heading: "In diesem Browser anmelden", incomplete: /^Dieser Link ist unvollständig\./, held: /Ihr Passwort hat gehalten/ }],
  ] as const) {
    await useLanguage(page, locale, baseURL!);
    await page.goto("/unlock");
    await expect(page.getByRole("heading", { name: words.heading, level: 1 })).toBeVisible();
    await expect(page.getByRole("alert").filter({ hasText: words.incomplete })).toBeVisible();
    await expect(page.getByText(words.held)).toBeHidden();
    await expectNoAxeViolations(page);
  }
});

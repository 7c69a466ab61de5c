import type { Page } from "@playwright/test";
import enAccount from "../messages/en/account.json";
import deAccount from "../messages/de/account.json";
import enCommon from "../messages/en/common.json";
import deCommon from "../messages/de/common.json";
import enForms from "../messages/en/forms.json";
import deForms from "../messages/de/forms.json";
import enRecovery from "../messages/en/recovery.json";
import deRecovery from "../messages/de/recovery.json";
import enRegister from "../messages/en/register.json";
import deRegister from "../messages/de/register.json";
import { PASSWORD, uniqueEmail, waitForForm } from "./helpers/accounts";
import { expectNoAxeViolations, expectTarget, useLanguage, VIEWPORTS } from "./helpers/layout";
import { mailTo } from "./helpers/outbox";
import { altchaPayload, expect as baseExpect, registerApi, test, withRetry } from "./helpers/serverGrid";

// Each test walks both languages (some both sizes) on a shared, often busy machine.
test.describe.configure({ timeout: 240_000 });
const expect = baseExpect.configure({ timeout: 20_000 });

/** A catalogue sentence with its ICU tags and placeholders dropped: the text a page shows around them. */
const plain = (sentence: string) => sentence.replace(/<\/?\w+>/g, "");

/** Each test's words, read from the catalogues, so English and German run the same steps. */
const WORDS = {
  en: { account: enAccount, common: enCommon, forms: enForms, recovery: enRecovery, register: enRegister },
  de: { account: deAccount, common: deCommon, forms: deForms, recovery: deRecovery, register: deRegister },
} as const;
const LOCALES = ["en", "de"] as const;

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

test("'Robot check done.' is not announced at a form's first focus", async ({ page, baseURL }) => {
  for (const locale of LOCALES) {
    await useLanguage(page, locale, baseURL!);
    for (const path of ["/sign-in", "/register", "/forgot-password"]) {
      await page.goto(path);
      await waitForForm(page);
      // The widget's script loads after hydration; focus before it is defined would start nothing.
      await page.waitForFunction(() => customElements.get("altcha-widget") !== undefined);
      // The page put the cursor in the field at hydration, maybe before then: out, and back in.
      const field = page.getByLabel(WORDS[locale].forms.email, { exact: true });
      await field.blur();
      await field.focus();
      // The proof of work ran at focus and finished quickly: nothing to say about it.
      const progress = page.getByTestId("altcha-progress");
      await expect(progress).toHaveAttribute("data-state", "verified", { timeout: 30_000 });
      await expect(progress).toHaveText("");
      await expect(page.getByRole("status").filter({ hasText: WORDS[locale].forms.checkDone })).toHaveCount(0);
    }
    await expectNoAxeViolations(page);
  }
});

test("'Check your email' is said once, 'Use another address' sits on a row of its own, and 'Sign in' carries the address outside the URL", async ({
  page,
  baseURL,
}) => {
  for (const [index, locale] of LOCALES.entries()) {
    const words = WORDS[locale];
    await page.setViewportSize(VIEWPORTS[index]!);
    await useLanguage(page, locale, baseURL!);
    const email = uniqueEmail(`check-${locale}`);
    await page.goto("/register");
    await waitForForm(page);
    await page.getByLabel(words.forms.email, { exact: true }).fill(email);
    await page.getByLabel(words.forms.password, { exact: true }).fill(PASSWORD);
    await page.getByRole("button", { name: words.register.submit }).click();

    const heading = page.getByRole("heading", { level: 1 });
    await expect(heading).toHaveText(words.register.checkEmail);
    await expect(heading).toBeFocused();
    await expect(page.getByText(words.register.checkEmail)).toHaveCount(1);
    await expect(page.getByTestId("register-sent")).toContainText(email);

    // The question is a sentence; its answers are buttons below it, not words inside it.
    const question = page.getByText(words.register.wrongAddress, { exact: true });
    const another = page.getByRole("button", { name: words.register.useAnotherAddress });
    const signIn = page.getByRole("group", { name: words.register.wrongAddress }).getByRole("link", { name: words.register.signIn });
    const [questionBox, anotherBox, signInBox] = await Promise.all([question, another, signIn].map((item) => item.boundingBox()));
    expect(anotherBox!.y).toBeGreaterThanOrEqual(questionBox!.y + questionBox!.height);
    expect(signInBox!.y).toBeGreaterThanOrEqual(questionBox!.y + questionBox!.height);
    await expect(another.locator("xpath=ancestor::p")).toHaveCount(0);
    await expectTarget(another);
    await expectTarget(signIn);
    await expectNoAxeViolations(page);

    await signIn.click();
    await expect(page).toHaveURL(/\/sign-in$/);
    await waitForForm(page);
    await expect(page.getByLabel(words.forms.email, { exact: true })).toHaveValue(email);
    await expect(page.getByLabel(words.forms.password, { exact: true })).toBeFocused();
  }
});

/** Registers `email` through the API, leaving its confirmation mail unopened: its link. */
async function registeredUnconfirmed(request: Parameters<typeof altchaPayload>[0], email: string): Promise<string> {
  const registered = await withRetry(async () =>
    request.post("/api/register", { data: { email, password: PASSWORD, altcha: await altchaPayload(request) } }),
  );
  expect(registered.status()).toBe(202);
  return (await mailTo(email, /confirm your email/i)).link;
}

/** The value beside a label of the account page's lists (`<dt>` then `<dd>`), in the first card that has it. */
const valueOf = (page: Page, label: string) => page.locator("dt", { hasText: label }).first().locator("xpath=following-sibling::dd[1]");

test("confirming: a focused notice, the real last-active time, an old link offers sign-in with no password form, and sign-out says it is working at once", async ({
  page,
  request,
  baseURL,
}) => {
  for (const locale of LOCALES) {
    const words = WORDS[locale];
    await page.context().clearCookies();
    await useLanguage(page, locale, baseURL!);
    const email = uniqueEmail(`confirmed-${locale}`);
    const link = await registeredUnconfirmed(request, email);

    await page.goto(link);
    await waitForForm(page);
    await page.getByLabel(words.forms.password, { exact: true }).fill(PASSWORD);
    await page.getByRole("button", { name: words.recovery.verify.submit }).click();
    await expect(page).toHaveURL(/\/account\?notice=email_verified$/);
    const notice = page.getByRole("status").filter({ hasText: words.account.notice.email_verified });
    await expect(notice).toBeVisible();
    await expect(notice).toBeFocused();

    // This session is active now: a time, not "When signing in".
    const lastActive = valueOf(page, words.account.sessions.lastActive);
    await expect(lastActive.locator("time")).toHaveCount(1);
    await expect(lastActive).not.toHaveText(/When signing in|Bei der Anmeldung/);
    await expectNoAxeViolations(page);

    // The same confirmation email, opened again: nothing to confirm, so no password to type.
    await page.goto(link);
    const confirmed = page.getByRole("status").filter({ hasText: plain(words.recovery.link.alreadyConfirmed).slice(0, 30) });
    await expect(confirmed).toBeVisible();
    await expect(confirmed.getByRole("link", { name: /./ })).toHaveAttribute("href", "/sign-in");
    await expect(page.getByLabel(words.forms.password, { exact: true })).toHaveCount(0);
    await expect(page.getByRole("button", { name: words.recovery.verify.submit })).toHaveCount(0);
    await expectNoAxeViolations(page);

    // Sign-out can take seconds (the dev server compiles it first): the button says so at once.
    await page.goto("/account");
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route("**/api/auth/signout", async (route) => {
      await held;
      await route.continue();
    });
    const signOut = page.getByTestId("sign-out");
    await expect(signOut).toHaveText(words.common.signOut);
    await signOut.click();
    await expect(signOut).toHaveText(words.common.signingOut);
    await expect(signOut).toHaveAttribute("aria-disabled", "true");
    await expectNoAxeViolations(page);
    release();
    await expect(page.getByTestId("who")).toBeVisible();
    await page.unroute("**/api/auth/signout");
  }
});

test("with JavaScript off, forgot password keeps the address, out of the URL, and says no email went out", async ({
  browser,
  baseURL,
  clientAddress,
}) => {
  for (const locale of LOCALES) {
    const words = WORDS[locale];
    const context = await browser.newContext({ baseURL, javaScriptEnabled: false, extraHTTPHeaders: { "X-Forwarded-For": clientAddress } });
    await context.addCookies([{ name: "gatehouse-locale", value: locale, url: baseURL! }]);
    const page = await context.newPage();
    const urls: string[] = [];
    page.on("request", (sent) => urls.push(sent.url()));
    const email = uniqueEmail(`nojs-${locale}`);
    await page.goto("/forgot-password");
    await page.getByLabel(words.forms.email, { exact: true }).fill(email);
    await page.getByRole("button", { name: words.recovery.forgot.submit }).click();
    await expect(page).toHaveURL(/\/forgot-password\?notice=javascript$/);
    const banner = page.getByTestId("posted-too-early");
    // "The address you typed is still in the field."
    await expect(banner).toContainText(words.forms.postedTooEarlyForgot.split(". ")[1]!);
    await expect(banner).not.toContainText(/password went nowhere|Passwort ging also nirgendwohin/);
    await expect(page.getByLabel(words.forms.email, { exact: true })).toHaveValue(email);
    expect(urls.filter((url) => url.includes(email) || url.includes(encodeURIComponent(email)))).toEqual([]);
    await context.close();
  }
});

test("after a reset the address reaches the sign-in form, never a URL", async ({ page, request, baseURL }) => {
  for (const locale of LOCALES) {
    const words = WORDS[locale];
    const email = uniqueEmail(`reset-${locale}`);
    expect((await registerApi(request, email, PASSWORD)).status()).toBe(202);
    await page.context().clearCookies();
    await useLanguage(page, locale, baseURL!);
    const urls: string[] = [];
    const listen = (sent: { url(): string }) => urls.push(sent.url());
    page.on("request", listen);
    await page.goto("/forgot-password");
    await waitForForm(page);
    await page.getByLabel(words.forms.email, { exact: true }).fill(email);
    await page.getByRole("button", { name: words.recovery.forgot.submit }).click();
    await expect(page.getByTestId("forgot-sent")).toBeVisible();
    const { link } = await mailTo(email, /reset your|zurücksetzen/i);
    await page.goto(link);
    await waitForForm(page);
    await page.getByLabel(words.recovery.link.newPassword, { exact: true }).fill("a fresh and different passphrase");
    await page.getByRole("button", { name: words.recovery.reset.submit }).click();
    await expect(page).toHaveURL(/\/sign-in\?done=reset$/);
    await waitForForm(page);
    await expect(page.getByLabel(words.forms.email, { exact: true })).toHaveValue(email);
    await expectNoAxeViolations(page);
    page.off("request", listen);
    expect(urls.filter((url) => url.includes(email) || url.includes(encodeURIComponent(email)))).toEqual([]);
  }
});

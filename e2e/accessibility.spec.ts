import { randomBytes } from "node:crypto";
import AxeBuilder from "@axe-core/playwright";
import type { Page } from "@playwright/test";
import { confirmDeviceFromOutbox, PASSWORD, signInThroughUi, uniqueEmail, waitForForm } from "./helpers/accounts";
import { mailTo } from "./helpers/outbox";
import { expect, registerApi, signInApi, test } from "./helpers/serverGrid";

/**
 * axe-core on every page and every state the pages can be in, light and dark, desktop and phone:
 * any violation fails. With it: no sideways scrolling at 320 and 390 px, no failed request (a
 * missing favicon was the only console error once), and no Content-Security-Policy report.
 */

const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

async function expectNoViolations(page: Page, state: string) {
  const results = await new AxeBuilder({ page }).analyze();
  const violations = results.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((node) => node.target.join(" ")).join(", ")}`);
  expect(violations, `axe on ${state}`).toEqual([]);
}

async function expectNoSideScroll(page: Page, state: string) {
  for (const width of [320, 390]) {
    await page.setViewportSize({ width, height: 800 });
    const { scrollWidth, innerWidth } = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth: window.innerWidth,
    }));
    expect(scrollWidth, `${state} at ${width} px`).toBeLessThanOrEqual(innerWidth);
  }
}

/** Every scheme and size for the state the page is in now. */
async function expectAccessibleEverywhere(page: Page, state: string) {
  for (const colorScheme of ["light", "dark"] as const) {
    await page.emulateMedia({ colorScheme });
    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      await expectNoViolations(page, `${state}, ${colorScheme}, ${size.width}×${size.height}`);
    }
  }
  await expectNoSideScroll(page, state);
  await page.setViewportSize(DESKTOP);
  await page.emulateMedia({ colorScheme: "light" });
}

/** Failed requests and CSP reports, gathered for the whole test. */
function watchForProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) problems.push(`CSP: ${message.text()}`);
  });
  page.on("response", (response) => {
    const expectedMissing = response.request().resourceType() === "document" && new URL(response.url()).pathname === "/no-such-page";
    if (response.status() >= 400 && !expectedMissing && !response.url().includes("/api/"))
      problems.push(`${response.status()} ${response.url()}`);
  });
  return problems;
}

/** The forms are complete once the (invisible) proof-of-work widget is defined. */
async function formReady(page: Page) {
  await waitForForm(page);
  await page.waitForFunction(() => customElements.get("altcha-widget") !== undefined);
}

test.describe.configure({ timeout: 120_000 });

test("signed-out pages: titles, favicon, no robot checkbox, axe and width", async ({ page }) => {
  const problems = watchForProblems(page);
  for (const [path, title] of [
    ["/", "Gatehouse"],
    ["/sign-in", "Sign in · Gatehouse"],
    ["/register", "Create an account · Gatehouse"],
    ["/forgot-password", "Reset your password · Gatehouse"],
    // Opened without its token: the page says the link is incomplete.
    ["/reset-password", "Choose a new password · Gatehouse"],
    ["/verify-email", "Confirm your email address · Gatehouse"],
    ["/unlock", "Sign in on this browser · Gatehouse"],
    ["/new-passkey", "Create your passkey · Gatehouse"],
    ["/no-such-page", "Page not found · Gatehouse"],
  ] as const) {
    await page.goto(path);
    await expect(page).toHaveTitle(title);
    await expect(page.locator('link[rel="icon"]')).toHaveAttribute("href", /icon\.svg/);
    // Dark mode follows the system, and the browser is told so before any CSS arrives.
    await expect(page.locator('meta[name="color-scheme"]')).toHaveAttribute("content", "light dark");
    if (path === "/sign-in" || path === "/register" || path === "/forgot-password") {
      await formReady(page);
      // The proof of work asks nothing of a person: no "I'm not a robot" box to tick, nothing invalid before anyone acted.
      await expect(page.getByRole("checkbox")).toHaveCount(0);
      await expect(page.locator('[aria-invalid="true"]')).toHaveCount(0);
    }
    if (["/reset-password", "/verify-email", "/unlock", "/new-passkey"].includes(path))
      await expect(page.getByTestId("link-missing")).toBeVisible();
    await expectAccessibleEverywhere(page, path);
  }
  await expect(page.getByRole("heading", { name: "Page not found" })).toBeVisible();
  expect(problems).toEqual([]);
});

test("field errors and a wrong password", async ({ page, request }) => {
  const problems = watchForProblems(page);
  await page.goto("/register");
  await formReady(page);
  await page.getByLabel("Email").fill("not-an-email");
  await page.getByLabel("Password").fill("short");
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByLabel("Email")).toBeFocused();
  await expectAccessibleEverywhere(page, "registration field errors");

  await page.goto("/sign-in");
  await formReady(page);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByLabel("Email")).toBeFocused();
  await expectAccessibleEverywhere(page, "sign-in field errors");

  const email = uniqueEmail("a11y");
  expect((await registerApi(request, email, PASSWORD)).status()).toBe(202);
  await signInThroughUi(page, email, "a wrong password");
  await expect(page.getByTestId("sign-in-error")).toHaveAttribute("data-error", "invalid_credentials");
  await expectAccessibleEverywhere(page, "wrong password");
  expect(problems).toEqual([]);
});

test("the rate-limit and lock banners", async ({ page, request, newClient }) => {
  const problems = watchForProblems(page);
  const email = uniqueEmail("a11y-limit");
  expect((await registerApi(request, email, PASSWORD)).status()).toBe(202);
  // Spend this address's allowance for the username over the API, then meet the limit in the page.
  for (let i = 0; i < 5; i++) await signInApi(request, email, "wrong password");
  await page.goto("/sign-in");
  await signInThroughUi(page, email, "wrong password");
  const banner = page.getByTestId("sign-in-error");
  await expect(banner).toHaveAttribute("data-error", "rate_limited");
  await expect(page.getByTestId("sign-in-error-countdown")).toBeVisible();
  await expectAccessibleEverywhere(page, "rate-limit banner");

  const locked = uniqueEmail("a11y-locked");
  expect((await registerApi(request, locked, PASSWORD)).status()).toBe(202);
  for (let i = 0; i < Number(process.env.E2E_LOCKOUT_THRESHOLD); i++) await signInApi(await newClient(), locked, "wrong password");
  await page.goto("/sign-in");
  await signInThroughUi(page, locked, PASSWORD);
  await expect(banner).toHaveAttribute("data-error", "locked");
  await expectAccessibleEverywhere(page, "lock banner");
  expect(problems).toEqual([]);
});

test("check your email, and the unlock page naming its account", async ({ page, request, newClient }) => {
  const problems = watchForProblems(page);
  await page.goto("/register");
  await formReady(page);
  const fresh = uniqueEmail("a11y-check");
  await page.getByLabel("Email").fill(fresh);
  await page.getByLabel("Password", { exact: true }).fill(PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  await expect(page.getByRole("heading", { name: "Check your email" })).toBeFocused();
  await expectAccessibleEverywhere(page, "check your email");

  const locked = uniqueEmail("a11y-unlock");
  expect((await registerApi(request, locked, PASSWORD)).status()).toBe(202);
  for (let i = 0; i < Number(process.env.E2E_LOCKOUT_THRESHOLD); i++) await signInApi(await newClient(), locked, "wrong password");
  await page.goto((await mailTo(locked, /sign-in to your .* account is paused/i)).link);
  await expect(page.getByTestId("link-account")).toBeVisible();
  await expectAccessibleEverywhere(page, "unlock page");
  expect(problems).toEqual([]);
});

test.describe("signed in, with long input", () => {
  // Times are the viewer's: a zone far from UTC shows the difference.
  test.use({ timezoneId: "Asia/Tokyo" });

  test("home and account pages hold a 254-character email and a 128-character password", async ({ page, request, newClient }) => {
    const problems = watchForProblems(page);
    const tail = `-${randomBytes(4).toString("hex")}@example.com`;
    const email = `${"long".repeat(64)}`.slice(0, 254 - tail.length) + tail;
    expect(email).toHaveLength(254);
    // 128 characters, in another script (the iroha poem, which no guess estimate finds a pattern in).
    const password = "いろはにほへとちりぬるをわかよたれそつねならむうゐのおくやまけふこえてあさきゆめみしゑひもせす"
      .repeat(3)
      .slice(0, 128);
    expect([...password]).toHaveLength(128);
    expect((await registerApi(request, email, password)).status()).toBe(202);
    // Events for the account page: two failures from elsewhere.
    for (let i = 0; i < 2; i++) await signInApi(await newClient(), email, "wrong password");

    await page.goto("/sign-in");
    await waitForForm(page);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Show password" }).click();
    await expect(page.getByLabel("Password")).toHaveValue(password);
    await expectNoSideScroll(page, "sign-in with long input, password shown");
    await page.setViewportSize(DESKTOP);
    await page.getByRole("button", { name: "Sign in", exact: true }).click();
    // The failures from elsewhere put the username under attack: this new browser confirms by mail.
    await expect(page.getByRole("heading", { name: "Confirm this device" })).toBeVisible();
    await expectAccessibleEverywhere(page, "device confirmation");
    await confirmDeviceFromOutbox(page, email);
    await expect(page.getByTestId("who")).toContainText("Signed in as");
    await expectAccessibleEverywhere(page, "home, signed in");

    await page.goto("/account");
    await expect(page).toHaveTitle("Your account · Gatehouse");
    await expect(page.getByTestId("account-email")).toHaveText(email);
    const when = page.getByTestId("security-events").locator("time").first();
    await expect(when).toHaveAttribute("datetime", /^\d{4}-\d{2}-\d{2}T/);
    await expect(when).not.toContainText("UTC");
    await expectAccessibleEverywhere(page, "account");
    expect(problems).toEqual([]);
  });
});

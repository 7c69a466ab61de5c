import { randomBytes } from "node:crypto";
import type { Page, Request } from "@playwright/test";
import { PASSWORD, registerThroughUi, signInThroughUi, uniqueEmail } from "./helpers/accounts";
import { expect, test } from "./helpers/serverGrid";

/** Every URL the page requests or navigates to, so a test can look for the password in any of them. */
function recordUrls(page: Page): string[] {
  const urls: string[] = [];
  page.on("request", (request: Request) => urls.push(request.url()));
  page.on("framenavigated", (frame) => urls.push(frame.url()));
  return urls;
}

function containsSecret(urls: string[], secret: string): string[] {
  const forms = [secret, encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2)];
  return urls.filter((url) => forms.some((form) => url.includes(form)));
}

const secret = () => `Pw-${randomBytes(6).toString("hex")}-secret`;

test.describe("with JavaScript off", () => {
  test.use({ javaScriptEnabled: false });

  for (const [path, button] of [
    ["/sign-in", "Sign in"],
    ["/register", "Create account"],
  ] as const) {
    test(`${path} says it needs JavaScript, and a submit posts without the password in any URL`, async ({ page }) => {
      const password = secret();
      const urls = recordUrls(page);
      await page.goto(path);
      await expect(page.getByTestId("noscript-notice")).toContainText("needs JavaScript");
      await page.getByLabel("Email").fill(uniqueEmail("nojs"));
      await page.getByLabel("Password", { exact: false }).fill(password);
      const [posted] = await Promise.all([
        page.waitForRequest((request) => request.method() === "POST"),
        page.getByRole("button", { name: button, exact: true }).click(),
      ]);
      expect(posted.url()).toContain("/api/no-script/");
      await expect(page).toHaveURL(new RegExp(`${path}\\?notice=javascript`));
      await expect(page.getByTestId("posted-too-early")).toContainText("your password went nowhere");
      // One banner, saying what to do: not a second (noscript) one repeating half of it.
      await expect(page.locator(".banner:visible")).toHaveCount(1);
      await expect(page.getByTestId("posted-too-early")).toContainText("turn it on for this site and reload the page");
      expect(containsSecret(urls, password)).toEqual([]);
    });
  }

  test("sign-out works without JavaScript", async ({ page, browser, clientAddress, baseURL }) => {
    // Signed in with JavaScript on, in a context of its own; then the same cookies without it.
    const withScript = await browser.newContext({
      baseURL,
      javaScriptEnabled: true,
      extraHTTPHeaders: { "X-Forwarded-For": clientAddress },
    });
    const scripted = await withScript.newPage();
    const email = uniqueEmail("nojs-out");
    await registerThroughUi(scripted, email);
    await signInThroughUi(scripted, email);
    await expect(scripted.getByTestId("who")).toContainText(`Signed in as ${email}`);
    await page.context().addCookies(await withScript.cookies());
    await withScript.close();

    await page.goto("/");
    await expect(page.getByTestId("who")).toContainText(`Signed in as ${email}`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page.getByTestId("who")).toContainText("You are not signed in");
  });
});

test("a submit right after load on a slow CPU never puts the password in a URL", async ({ page, browserName }) => {
  test.skip(browserName !== "chromium", "CPU throttling is a Chromium DevTools feature");
  // Two pages at an eighth of the CPU take 6-12 s alone and over 30 s beside a busy machine (CI's
  // other worker): the property has no time limit, so the test gets three times the usual one.
  test.slow();
  const email = uniqueEmail("early");
  await registerThroughUi(page, email);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Emulation.setCPUThrottlingRate", { rate: 8 });
  const password = secret();
  const urls = recordUrls(page);
  for (const path of ["/sign-in", "/register"]) {
    // As soon as the fields exist, before hydration has had a chance: type and press Enter.
    await page.goto(path, { waitUntil: "commit" });
    await page.getByLabel("Email").fill(email);
    // The input itself: once hydrated, /register adds a meter labelled "Password strength".
    const passwordField = page.locator('input[name="password"]');
    await passwordField.fill(password);
    await passwordField.press("Enter");
    await page.waitForLoadState("load");
  }
  await cdp.send("Emulation.setCPUThrottlingRate", { rate: 1 });
  expect(containsSecret(urls, password)).toEqual([]);
  expect(PASSWORD).not.toBe(password);
});

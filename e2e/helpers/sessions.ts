import type { APIRequestContext, Browser, Page, TestInfo } from "@playwright/test";
import { PASSWORD, signInThroughUi, uniqueEmail } from "./accounts";
import { addressFor, expect, registerApi } from "./serverGrid";

/**
 * A new account, signed in on `page` through the sign-in page and landed on /account. Its email.
 */
export async function accountOnPage(page: Page, newClient: () => Promise<APIRequestContext>, prefix: string): Promise<string> {
  const email = uniqueEmail(prefix);
  expect((await registerApi(await newClient(), email, PASSWORD)).status()).toBe(202);
  await page.goto("/sign-in?callbackUrl=%2Faccount");
  await signInThroughUi(page, email);
  await expect(page.getByTestId("account-email")).toHaveText(email);
  return email;
}

/** Another browser (context) with its own client address; `javaScriptEnabled` as asked. */
export function otherBrowser(browser: Browser, baseURL: string | undefined, testInfo: TestInfo, javaScriptEnabled = true) {
  return browser.newContext({ baseURL, javaScriptEnabled, extraHTTPHeaders: { "X-Forwarded-For": addressFor(testInfo) } });
}

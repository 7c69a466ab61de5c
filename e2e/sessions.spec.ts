import { expect, signInApi, test } from "./helpers/serverGrid";
import { PASSWORD } from "./helpers/accounts";
import { accountOnPage, otherBrowser } from "./helpers/sessions";

test("sign out everywhere else, from a browser without JavaScript: the other browser is signed out on its next navigation", async ({
  page,
  browser,
  baseURL,
  newClient,
}, testInfo) => {
  // The other browser: signed in through the page, on the account page.
  const email = await accountOnPage(page, newClient, "everywhere");

  // This browser runs no script: it signs in through the API (its cookies are the context's) and uses plain forms.
  const here = await otherBrowser(browser, baseURL, testInfo, false);
  try {
    expect((await signInApi(here.request, email, PASSWORD)).kind).toBe("signed-in");
    const mine = await here.newPage();
    await mine.goto("/account");
    const sessions = mine.getByTestId("browser-sessions");
    await expect(sessions.locator("li")).toHaveCount(2);
    await expect(sessions.locator('li[data-current="true"]')).toContainText("(this device)");
    await expect(sessions.locator("time").first()).toHaveAttribute("datetime", /^\d{4}-\d\d-\d\dT/);

    await mine.getByRole("button", { name: "Sign out everywhere else" }).click();
    await expect(mine).toHaveURL(/\/account\?notice=signed_out_everywhere_else$/);
    await expect(mine.getByTestId("account-notice")).toContainText("signed out everywhere else");
    await expect(mine.getByTestId("browser-sessions").locator("li")).toHaveCount(1);

    // The other browser's next navigation finds its session ended.
    await page.goto("/account");
    await expect(page).toHaveURL(/\/sign-in\?callbackUrl=%2Faccount/);
    await page.goto("/");
    await expect(page.getByTestId("who")).toContainText("You are not signed in");
    const session = await page.request.get("/api/auth/session");
    expect(await session.json()).toEqual({});

    // This one is still signed in, and its security events say what happened.
    await mine.goto("/account");
    await expect(mine.getByTestId("account-email")).toHaveText(email);
    await expect(mine.getByTestId("security-events")).toContainText("Signed out everywhere else");
  } finally {
    await here.close();
  }
});

test("revoking one browser session from the account page ends just that one", async ({ page, browser, baseURL, newClient }, testInfo) => {
  const email = await accountOnPage(page, newClient, "revoke");
  const other = await otherBrowser(browser, baseURL, testInfo);
  try {
    expect((await signInApi(other.request, email, PASSWORD)).kind).toBe("signed-in");
    await page.reload();
    const rows = page.getByTestId("browser-sessions").locator("li");
    await expect(rows).toHaveCount(2);
    await rows
      .filter({ has: page.getByRole("button", { name: /Revoke/ }) })
      .getByRole("button", { name: /Revoke/ })
      .click();
    await expect(page).toHaveURL(/notice=browser_session_revoked/);
    await expect(page.getByTestId("browser-sessions").locator("li")).toHaveCount(1);
    expect(await (await other.request.get("/api/auth/session")).json()).toEqual({});
    expect((await other.request.get("/api/v1/me")).status()).toBe(401);
  } finally {
    await other.close();
  }
});

test("on a phone, sessions are labelled cards with local times; 'Sign out everywhere else' is secondary and only there with another session", async ({
  page,
  browser,
  baseURL,
  newClient,
}, testInfo) => {
  await page.setViewportSize({ width: 320, height: 800 });
  const email = await accountOnPage(page, newClient, "phone");
  const card = page.getByTestId("browser-sessions").locator("li");
  await expect(card).toHaveCount(1);
  for (const label of ["Browser", "Network", "Signed in", "Last active"])
    await expect(card.locator("dt", { hasText: label })).toHaveCount(1);
  // One session: nothing else to sign out, so no button for it.
  await expect(page.getByTestId("sign-out-everywhere-else")).toHaveCount(0);

  const other = await otherBrowser(browser, baseURL, testInfo);
  try {
    expect((await signInApi(other.request, email, PASSWORD)).kind).toBe("signed-in");
    await page.reload();
    await expect(card).toHaveCount(2);
    await expect(page.getByTestId("sign-out-everywhere-else")).toHaveClass(/secondary/);
    // Times are the viewer's (LocalTime replaces the server's UTC text once hydrated).
    await expect(card.locator("time").first()).not.toContainText("UTC");
    // No word broken mid-word: the heading and the Revoke button each stay on one line at 320 px.
    for (const locator of [page.getByRole("heading", { name: "Browsers" }), page.getByRole("button", { name: /^Revoke/ }).first()]) {
      const lines = await locator.evaluate((element) => {
        const range = document.createRange();
        range.selectNodeContents(element);
        return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
      });
      expect(lines, (await locator.textContent()) ?? "").toBe(1);
    }
  } finally {
    await other.close();
  }
});

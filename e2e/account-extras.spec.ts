import fs from "node:fs/promises";
import { PASSWORD, signInThroughUi, uniqueEmail } from "./helpers/accounts";
import { codeAt } from "./helpers/factors";
import { expectNoAxeViolations } from "./helpers/layout";
import { mailTo } from "./helpers/outbox";
import { expect, registerApi, test } from "./helpers/serverGrid";
import { accountOnPage, otherBrowser } from "./helpers/sessions";

/**
 * Issue 57, items 7 and 8, from the pages: "This wasn't me" in the new-device mail ends that
 * sign-in (once, and only that one), and recovery codes can be copied and downloaded. The passkey
 * invitation needs a domain (e2e/passkeys.spec.ts).
 */
test("This wasn't me: the new-device mail's button ends that sign-in at once, and the link works once", async ({
  page,
  browser,
  baseURL,
  newClient,
}, testInfo) => {
  test.setTimeout(120_000);
  // Registered and confirmed (confirming was its first sign-in, elsewhere): the next new device is news.
  const email = uniqueEmail("not-me");
  expect((await registerApi(await newClient(), email, PASSWORD)).status()).toBe(202);
  const intruder = await otherBrowser(browser, baseURL, testInfo);
  const reader = await otherBrowser(browser, baseURL, testInfo);
  try {
    const theirs = await intruder.newPage();
    await theirs.goto("/sign-in?callbackUrl=%2Faccount");
    await signInThroughUi(theirs, email);
    await expect(theirs.getByTestId("account-email")).toHaveText(email);
    const mail = await mailTo(email, /New sign-in/);
    expect(mail.text).toContain("This wasn't me");
    expect(mail.link).toMatch(/\/not-me#token=/);
    // The owner, signed in on a browser of their own meanwhile.
    await page.goto("/sign-in?callbackUrl=%2Faccount");
    await signInThroughUi(page, email);
    await expect(page.getByTestId("account-email")).toHaveText(email);

    // The owner opens the link on a phone with no session: nothing happens until the button.
    const phone = await reader.newPage();
    await phone.goto(mail.link);
    await expect(phone.getByRole("heading", { name: "This wasn't me" })).toBeVisible();
    await expect(phone.getByText(email)).toHaveCount(0);
    await expectNoAxeViolations(phone);
    await theirs.reload();
    await expect(theirs.getByTestId("account-email")).toHaveText(email);

    await phone.getByRole("button", { name: "End that sign-in" }).click();
    await expect(phone).toHaveURL(/\/sign-in\?done=not_me/);
    await expect(phone.getByText(/That sign-in is ended/)).toBeVisible();

    // That session is over at once; the owner's own is not.
    await theirs.goto("/account");
    await expect(theirs).toHaveURL(/\/sign-in/);
    await page.reload();
    await expect(page.getByTestId("account-email")).toHaveText(email);
    await expect(page.getByTestId("security-events")).toContainText("Ended a sign-in you said was not you");

    // Single use: the same link again is the one invalid-link answer.
    await phone.goto(mail.link);
    await phone.getByRole("button", { name: "End that sign-in" }).click();
    await expect(phone.getByTestId("link-error")).toBeVisible();
    await expect(phone).toHaveURL(/\/not-me/);
  } finally {
    await intruder.close();
    await reader.close();
  }
});

test("recovery codes can be copied and downloaded when they are shown", async ({ page, newClient }) => {
  test.setTimeout(120_000);
  await accountOnPage(page, newClient, "codes-copy");
  // Recovery codes, shown once when the authenticator app is turned on: Copy and Download.
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(page.url()).origin });
  await page.getByRole("button", { name: "Set up an authenticator app" }).click();
  const secret = (await page.getByTestId("totp-secret").textContent())!.replace(/\s/g, "");
  await page.getByLabel("Code", { exact: true }).fill(codeAt(secret, Date.now()));
  await page.getByRole("button", { name: "Turn on" }).click();
  const shown = page.getByTestId("recovery-codes").locator("code");
  await expect(shown).toHaveCount(10);
  const codes = await shown.allTextContents();

  await page.getByRole("button", { name: "Copy", exact: true }).click();
  await expect(page.getByTestId("recovery-codes-copied")).toHaveText("Copied.");
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  for (const code of codes) expect(copied).toContain(code);

  const downloading = page.waitForEvent("download");
  await page.getByRole("button", { name: "Download", exact: true }).click();
  const download = await downloading;
  expect(download.suggestedFilename()).toBe("recovery-codes.txt");
  const file = await fs.readFile((await download.path())!, "utf8");
  expect(file.split("\n").filter((line) => codes.includes(line))).toHaveLength(10);
  expect(file).toContain("Recovery codes (each works once)");
  await expectNoAxeViolations(page);
});

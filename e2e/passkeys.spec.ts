import { request as playwrightRequest, type APIRequestContext } from "@playwright/test";
import { PASSWORD, resetLinkFor, signInThroughUi, TWELVE, uniqueEmail, waitForForm } from "./helpers/accounts";
import { addPasskeyOnAccountPage, virtualAuthenticator } from "./helpers/factors";
import { VIEWPORTS, expectApart, expectAppField, expectNoAxeViolations, expectTarget, useLanguage } from "./helpers/layout";
import { startInstance, sharedSecrets, type Instance } from "./helpers/instances";
import { expect, registerApi, signInApi, test } from "./helpers/serverGrid";

/**
 * Passkeys in real Chromium, with its virtual authenticator (CDP WebAuthn domain) standing in for
 * a phone or a security key. WebAuthn needs a domain RP ID, so this spec runs its own instance at
 * http://localhost:PORT. Add a passkey, sign in with it alone, sign in with it while strangers
 * hold the account locked, remove it and fail with it.
 */
test.describe("passkeys", () => {
  // Its own instance starts (and migrates a fresh database) on a loaded machine.
  // One instance for the describe's tests: serial, so a second worker does not start another on its folder.
  test.describe.configure({ mode: "serial", timeout: 120_000 });
  let instance: Instance;
  const clients: APIRequestContext[] = [];
  // Its own clients: a fresh address each, as strangers would come.
  let sequence = 0;
  const client = async () => {
    sequence += 1;
    const context = await playwrightRequest.newContext({
      baseURL: instance.baseURL,
      extraHTTPHeaders: { "X-Forwarded-For": `10.200.${Math.floor(sequence / 250)}.${(sequence % 250) + 1}` },
    });
    clients.push(context);
    return context;
  };

  test.beforeAll(async () => {
    // A production server on a new PGlite folder: over 30 s once on a loaded machine (the retry
    // then found the folder still held), as the other specs that start one allow for.
    test.setTimeout(90_000);
    instance = await startInstance(
      { ...sharedSecrets(), DATABASE_URL: `pglite:${process.env.E2E_DATA_DIR}-passkeys` },
      { hostname: "localhost" },
    );
  });

  test.afterAll(async () => {
    await Promise.all(clients.splice(0).map((context) => context.dispose()));
    await instance?.stop();
  });

  test("add a passkey, sign in with it alone, also while strangers hold the account locked; removed, it fails", async ({ browser }) => {
    const email = uniqueEmail("passkey");
    expect((await registerApi(await client(), email, PASSWORD)).status()).toBe(202);

    const context = await browser.newContext({ baseURL: instance.baseURL });
    const page = await context.newPage();
    const { cdp, authenticatorId } = await virtualAuthenticator(page);

    // Signed in with the password, the owner adds a passkey from the account page.
    await page.goto("/sign-in?callbackUrl=%2Faccount");
    await signInThroughUi(page, email);
    await expect(page).toHaveURL(/\/account$/);
    await page.getByRole("button", { name: "Add a passkey" }).click();
    await expect(page.getByTestId("passkey")).toHaveCount(1);
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.isResidentCredential).toBe(true);
    const passkeyName = (await page.getByTestId("passkey").locator("strong").textContent())!;

    // Signed out, the passkey alone signs in: offered in the email field's autofill (conditional
    // mediation), which the virtual authenticator accepts as soon as the sign-in page offers it.
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await expect(page.getByTestId("who")).toContainText("You are not signed in");
    await page.goto("/sign-in?callbackUrl=%2Faccount");
    await expect(page).toHaveURL(/\/account$/);
    await expect(page.getByTestId("account-email")).toHaveText(email);

    // From here on the browser offers no autofill, so "Sign in with a passkey" is what signs in.
    await context.addInitScript(() => {
      PublicKeyCredential.isConditionalMediationAvailable = async () => false;
    });
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await expect(page.getByTestId("who")).toContainText("You are not signed in");
    await page.goto("/sign-in?callbackUrl=%2Faccount");
    await waitForForm(page);
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await expect(page).toHaveURL(/\/account$/);
    await expect(page.getByTestId("account-email")).toHaveText(email);

    // Strangers lock the account for every new device; the owner's passkey still opens it.
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    for (let i = 0; i < 5; i++) expect((await signInApi(await client(), email, "a stranger's guess")).kind).toBe("invalid");
    expect((await signInApi(await client(), email, PASSWORD)).body).toMatchObject({ error: "locked" });
    await page.goto("/sign-in?callbackUrl=%2Faccount");
    await waitForForm(page);
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await expect(page).toHaveURL(/\/account$/);
    await expect(page.getByTestId("new-devices-paused")).toBeVisible();

    // Removed (the passkey sign-in just now is a fresh authentication), it no longer signs in.
    await page.getByRole("button", { name: `Remove passkey ${passkeyName}` }).click();
    await expect(page.getByTestId("passkey")).toHaveCount(0);
    await page.getByRole("button", { name: "Sign out", exact: true }).click();
    await page.goto("/sign-in");
    await waitForForm(page);
    await page.getByRole("button", { name: "Sign in with a passkey" }).click();
    await expect(page.getByTestId("passkey-error")).toContainText("not registered here");
    await expect(page).toHaveURL(/\/sign-in/);
    await context.close();
  });

  test("after a password sign-in an account with no passkey is invited to add one, and Don't ask again is for good", async ({
    browser,
  }) => {
    const email = uniqueEmail("invite");
    expect((await registerApi(await client(), email, PASSWORD)).status()).toBe(202);
    const first = await browser.newContext({ baseURL: instance.baseURL });
    const second = await browser.newContext({ baseURL: instance.baseURL });
    try {
      const page = await first.newPage();
      await page.goto("/sign-in?callbackUrl=%2Faccount");
      await signInThroughUi(page, email);
      await expect(page).toHaveURL(/\/account$/);
      const invite = page.getByTestId("passkey-invite");
      await expect(invite.getByRole("heading", { name: "Add a passkey" })).toBeVisible();
      await expectNoAxeViolations(page);
      await invite.getByRole("button", { name: "Don't ask again" }).click();
      await expect(page).toHaveURL(/\/account/);
      await expect(page.getByTestId("account-email")).toHaveText(email);
      await expect(page.getByTestId("passkey-invite")).toHaveCount(0);
      // For good: not after the next password sign-in either, in another browser.
      const again = await second.newPage();
      await again.goto("/sign-in?callbackUrl=%2Faccount");
      await signInThroughUi(again, email);
      await expect(again.getByTestId("account-email")).toHaveText(email);
      await expect(again.getByTestId("passkey-invite")).toHaveCount(0);
    } finally {
      await first.close();
      await second.close();
    }
  });

  test("a passkey's name is a field, and Rename and Remove stand apart, in English and German", async ({ browser }) => {
    const email = uniqueEmail("passkey-layout");
    expect((await registerApi(await client(), email, PASSWORD)).status()).toBe(202);
    const context = await browser.newContext({ baseURL: instance.baseURL });
    const page = await context.newPage();
    const name = await addPasskeyOnAccountPage(page, email);

    for (const [locale, words] of [
      ["en", { name: "Name", rename: `Rename passkey ${name}`, remove: `Remove passkey ${name}` }],
      ["de", { name: "Name", rename: `Passkey ${name} umbenennen`, remove: `Passkey ${name} entfernen` }],
    ] as const) {
      await useLanguage(page, locale, instance.baseURL);
      await page.reload();
      await expect(page.locator("html")).toHaveAttribute("lang", locale);
      const passkey = page.getByTestId("passkey");
      for (const viewport of VIEWPORTS) {
        await page.setViewportSize(viewport);
        await expectAppField(passkey.getByRole("textbox", { name: words.name, exact: true }));
        const rename = passkey.getByRole("button", { name: words.rename });
        const remove = passkey.getByRole("button", { name: words.remove });
        await expectTarget(rename);
        await expectTarget(remove);
        await expectApart(rename, remove);
      }
      await expectNoAxeViolations(page);
    }
    await context.close();
  });

  test("the reset page of an account with a passkey: 8 while it stays, 15 once removing them is ticked", async ({ browser }) => {
    const email = uniqueEmail("passkey-reset");
    expect((await registerApi(await client(), email, PASSWORD)).status()).toBe(202);
    const context = await browser.newContext({ baseURL: instance.baseURL });
    const page = await context.newPage();
    await addPasskeyOnAccountPage(page, email);
    await page.goto(await resetLinkFor(page, email));
    await waitForForm(page);
    const field = page.getByLabel("New password", { exact: true });
    await expect(field).toHaveAccessibleDescription(
      "15 to 128 characters (8 if you keep a passkey), not a common or breached password. A passphrase of several words works well.",
    );
    const remove = page.getByRole("checkbox", { name: "Also remove every passkey" });
    await expect(remove).toBeVisible();
    await expect(remove).toHaveAccessibleDescription(/a passkey signs in without the password/);
    await field.fill(TWELVE);
    const meter = page.getByTestId("password-strength");
    await expect(meter).not.toHaveAttribute("data-score", "0");
    await expect(meter).not.toContainText("Use at least");
    await remove.check();
    await expect(meter).toHaveAttribute("data-score", "0");
    await expect(meter).toContainText("Use at least 15 characters.");
    await expectNoAxeViolations(page);
    await context.close();
  });
});

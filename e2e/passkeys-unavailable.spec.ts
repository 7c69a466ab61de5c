import { request as playwrightRequest } from "@playwright/test";
import { PASSWORD, signInThroughUi, uniqueEmail } from "./helpers/accounts";
import { expectNoAxeViolations, useLanguage } from "./helpers/layout";
import { startInstance, sharedSecrets, type Instance } from "./helpers/instances";
import { expect, registerApi, test } from "./helpers/serverGrid";

/**
 * A server whose public URL is an IP address (http://127.0.0.1:PORT), where no browser makes a
 * passkey: the account page says why and offers no "Add a passkey" that could only fail, the
 * sign-in page offers no passkey, and the start logs it once, however many pages are served.
 */
test.describe("passkeys at an IP address", () => {
  test.describe.configure({ timeout: 120_000 });
  let instance: Instance;

  test.beforeAll(async () => {
    test.setTimeout(90_000);
    instance = await startInstance({ ...sharedSecrets(), DATABASE_URL: `pglite:${process.env.E2E_DATA_DIR}-passkeys-ip` });
  });

  test.afterAll(async () => {
    await instance?.stop();
  });

  test("the account page says why, in English and German; the start logged it once", async ({ browser }) => {
    const email = uniqueEmail("passkey-ip");
    const api = await playwrightRequest.newContext({ baseURL: instance.baseURL, extraHTTPHeaders: { "X-Forwarded-For": "10.201.0.1" } });
    expect((await registerApi(api, email, PASSWORD)).status()).toBe(202);
    await api.dispose();

    const context = await browser.newContext({ baseURL: instance.baseURL });
    const page = await context.newPage();
    await page.goto("/sign-in?callbackUrl=%2Faccount");
    await expect(page.getByRole("button", { name: "Sign in", exact: true })).toBeVisible();
    await expect(page.getByRole("button", { name: "Sign in with a passkey" })).toHaveCount(0);
    await signInThroughUi(page, email);
    await expect(page).toHaveURL(/\/account$/);

    const section = page.locator(".card").filter({ has: page.getByRole("heading", { name: "Passkeys", level: 2 }) });
    await expect(section.getByTestId("passkeys-unavailable")).toHaveText(
      `Passkeys cannot work at ${instance.baseURL}: browsers make passkeys only for a domain name, never for an IP address. ` +
        "The operator sets NEXTAUTH_URL to a domain name (on your own computer: http://localhost).",
    );
    await expect(page.getByRole("button", { name: "Add a passkey" })).toHaveCount(0);
    await expectNoAxeViolations(page);

    await useLanguage(page, "de", instance.baseURL);
    await page.reload();
    await expect(page.locator("html")).toHaveAttribute("lang", "de");
    await expect(section.getByTestId("passkeys-unavailable")).toContainText(
      `Passkeys funktionieren unter ${instance.baseURL} nicht: Browser erstellen Passkeys nur für einen Domainnamen`,
    );
    await expect(page.getByRole("button", { name: "Passkey hinzufügen" })).toHaveCount(0);
    await expectNoAxeViolations(page);
    await page.goto("/sign-in");
    await expect(page.getByRole("button", { name: "Mit einem Passkey anmelden" })).toHaveCount(0);
    await context.close();

    // Once at the start, with the reason and the address; never per page.
    const lines = instance
      .output()
      .split("\n")
      .filter((line) => line.includes("passkeys_unavailable"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('"reason":"ip_address"');
    expect(lines[0]).toContain(instance.baseURL);
  });
});

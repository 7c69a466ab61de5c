import { confirmDeviceFromOutbox, PASSWORD, signInThroughUi, uniqueEmail } from "./helpers/accounts";
import { expect, registerApi, signInApi, test } from "./helpers/serverGrid";

test("after failed attempts, signing in says how many there were and the account page lists them", async ({ page, request, newClient }) => {
  const email = uniqueEmail("watched");
  expect((await registerApi(request, email, PASSWORD)).status()).toBe(202);
  // A first successful sign-in, then three wrong passwords from elsewhere.
  expect((await signInApi(await newClient(), email, PASSWORD)).kind).toBe("signed-in");
  for (let i = 0; i < 3; i++) expect((await signInApi(await newClient(), email, "wrong password")).kind).toBe("invalid");

  await page.goto("/sign-in");
  await signInThroughUi(page, email, PASSWORD);
  // After those failures this browser is a new device of a username under attack: the mailed code.
  await confirmDeviceFromOutbox(page, email);
  await expect(page.getByTestId("who")).toContainText(`Signed in as ${email}`);
  await expect(page.getByTestId("failures-before-sign-in")).toContainText("There were 3 failed sign-in attempts");

  await page.getByRole("link", { name: "See where they came from" }).click();
  const events = page.getByTestId("security-events");
  await expect(events.locator('tr[data-kind="sign_in_failed"]')).toHaveCount(3);
  // Confirming the address signed in too: three sign-ins in all.
  await expect(events.locator('tr[data-kind="sign_in_succeeded"]')).toHaveCount(3);
  // Addresses are shown truncated to their /24, after the client's browser family.
  await expect(events.locator('tr[data-kind="sign_in_failed"] td').nth(2)).toHaveText(/^[A-Za-z ]+, 10\.\d+\.\d+\.x$/);
  // The sign-in that started this browser's session is "this device"; the API one is not.
  await expect(events.locator('tr[data-kind="sign_in_succeeded"]', { hasText: "(this device)" })).toHaveCount(1);
  await expect(events.locator('tr[data-kind="sign_in_succeeded"]').first()).toContainText("Chrome");
});

test("security headers and an enforced CSP with a nonce are sent by default", async ({ request }) => {
  const response = await request.get("/sign-in");
  const headers = response.headers();
  expect(headers["content-security-policy-report-only"]).toBeUndefined();
  const csp = headers["content-security-policy"];
  expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/);
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toContain("report-uri /api/csp-report");
  expect(headers["x-content-type-options"]).toBe("nosniff");
  expect(headers["referrer-policy"]).toBe("strict-origin-when-cross-origin");
  expect(headers["strict-transport-security"]).toContain("max-age=");
  // The page's own scripts carry the nonce, so the enforced policy does not break it.
  const nonce = /'nonce-([^']+)'/.exec(csp!)![1];
  expect(await response.text()).toContain(`nonce="${nonce}"`);
});

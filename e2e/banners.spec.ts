import { confirmDeviceFromOutbox, PASSWORD, signInThroughUi, uniqueEmail, waitForForm } from "./helpers/accounts";
import { expect, registerApi, signInApi, test } from "./helpers/serverGrid";
import { expectNoAxeViolations } from "./helpers/layout";

test("the 429 banner counts down from Retry-After and sign-in works again after it", async ({ page, request }) => {
  const email = uniqueEmail("banner");
  expect((await registerApi(request, email, PASSWORD)).status()).toBe(202);
  await page.goto("/sign-in");
  const banner = page.getByTestId("sign-in-error");
  const button = page.getByRole("button", { name: /^(Sign in|Signing in…)$/ });

  // Five attempts spend the allowance; a slow browser may earn a token back meanwhile, so keep
  // failing until the limiter answers (the lockout threshold is far above this in the test config).
  let attempts = 0;
  while (attempts < 12) {
    attempts += 1;
    await signInThroughUi(page, email, "wrong password");
    // After the first failure the username is under attack: a wrong password from this new browser
    // is answered with the device confirmation too, and "Sign in again" goes back to the form.
    const confirm = page.getByRole("heading", { name: "Confirm this device" });
    await expect(banner.or(confirm)).toBeVisible();
    if (await confirm.isVisible()) {
      await page.getByRole("button", { name: "Sign in again" }).click();
      continue;
    }
    await expect(banner).toHaveAttribute("data-error", /^(invalid_credentials|rate_limited)$/);
    if ((await banner.getAttribute("data-error")) === "rate_limited") break;
  }
  expect(attempts).toBeGreaterThanOrEqual(6);
  await expect(banner).toHaveAttribute("data-error", "rate_limited");
  // One sentence for the reason, announced (role=alert) with the time of day; the countdown is for the eyes.
  const message = page.getByTestId("sign-in-error-message");
  await expect(message).toHaveAttribute("role", "alert");
  await expect(message).toContainText(/^Too many sign-in attempts (for this email address )?have come from your network\./);
  await expect(page.getByTestId("sign-in-error-countdown")).toHaveText(/^Try again in [1-6] s\.$/);
  await expect(page.getByTestId("sign-in-error-countdown")).toHaveAttribute("aria-hidden", "true");
  // The refused password is not left in the field through the wait.
  await expect(page.getByLabel("Password")).toHaveValue("");
  // Held, not disabled: focus stays on the button instead of falling to <body>.
  await expect(button).toHaveAttribute("aria-disabled", "true");
  await expect(button).toBeFocused();

  // One token returns every 6 s (5/30s in the test configuration); then the sentence changes.
  await expect(button).not.toHaveAttribute("aria-disabled", /.*/, { timeout: 10_000 });
  await expect(message).toHaveText("You can try again now.");
  await expect(page.getByTestId("sign-in-error-countdown")).toHaveCount(0);
  await signInThroughUi(page, email, PASSWORD);
  // After those failures this browser is a new device of a username under attack: the mailed code.
  await confirmDeviceFromOutbox(page, email);
  await expect(page.getByTestId("who")).toContainText(`Signed in as ${email}`);
});

test("a locked account shows when sign-in resumes", async ({ page, request, newClient }) => {
  const email = uniqueEmail("paused");
  expect((await registerApi(request, email, PASSWORD)).status()).toBe(202);
  for (let i = 0; i < Number(process.env.E2E_LOCKOUT_THRESHOLD); i++)
    expect((await signInApi(await newClient(), email, "wrong password")).kind).toBe("invalid");

  await page.goto("/sign-in");
  await signInThroughUi(page, email, PASSWORD);
  const banner = page.getByTestId("sign-in-error");
  await expect(banner).toHaveAttribute("data-error", "locked");
  // The account is paused (not "your network"), in the rounded words the server allows a stranger:
  // no seconds, no exact time, and each fact once.
  const message = page.getByTestId("sign-in-error-message");
  await expect(message).toContainText(
    /^Sign-in to this account is paused after repeated failed attempts\. You can try again in about (a minute|\d+ minutes), or now from a device you have used before\.$/,
  );
  await expect(page.getByTestId("sign-in-error-countdown")).toHaveText(
    /^Try again in about (a minute|\d+ minutes), or now from a device you have used before\.$/,
  );
  await expect(banner).not.toContainText(/\d s\b/);
});

test("the countdown's first frame counts from the answer, not from page load, and the sentence changes at zero", async ({ page }) => {
  await page.goto("/sign-in");
  await waitForForm(page);
  // Long enough on the page that a clock started at mount would show a wrong figure.
  await page.waitForTimeout(3_000);
  // Every text the banner ever shows, from its first frame.
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { seen: string[] }).seen = seen;
    const banner = document.querySelector('[data-testid="sign-in-error"]')!;
    new MutationObserver(() => {
      const text = banner.textContent ?? "";
      if (text && seen.at(-1) !== text) seen.push(text);
    }).observe(banner, { subtree: true, childList: true, characterData: true });
  });
  // The server's answer when the hash budget is full: 503 busy, Retry-After: 1.
  await page.route("**/api/auth/callback/credentials", (route) =>
    route.fulfill({
      status: 503,
      headers: { "Content-Type": "application/json", "Retry-After": "1" },
      body: JSON.stringify({
        error: "busy",
        message: "The server is busy checking other passwords. Try again in a moment.",
        retryAfterSeconds: 1,
      }),
    }),
  );
  await signInThroughUi(page, uniqueEmail("first-frame"), PASSWORD);
  const message = page.getByTestId("sign-in-error-message");
  await expect(message).toHaveText("You can try again now.", { timeout: 5_000 });
  // Good news, out of the amber warning: the banner's tone is "ok" now.
  await expect(page.getByTestId("sign-in-error")).toHaveClass(/\bok\b/);
  await expect(page.getByTestId("sign-in-error")).not.toHaveClass(/\bwarn\b/);
  await expectNoAxeViolations(page);
  const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
  expect(seen[0]).toBe("The server could not take your request just now. You can try again in a few seconds.Try again in 1 s.");
  expect(seen.filter((text) => /Try again in (?!1 s\.)\d/.test(text))).toEqual([]);
  expect(seen.at(-1)).toBe("You can try again now.");
});

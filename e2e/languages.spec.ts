import { request as playwrightRequest, type APIRequestContext, type Page } from "@playwright/test";
import { PASSWORD, uniqueEmail, waitForForm } from "./helpers/accounts";
import { addPasskeyOnAccountPage, codeAt } from "./helpers/factors";
import { sharedSecrets, startInstance } from "./helpers/instances";
import { mailTo } from "./helpers/outbox";
import { accountOnPage } from "./helpers/sessions";
import { altchaPayload, expect, registerApi, signInApi, test } from "./helpers/serverGrid";

/**
 * Languages in the browser: a German browser gets German pages, the footer's switch changes the
 * language and <html lang>, and in the pseudo-locale (every catalogue message wrapped in ⟦…⟧)
 * no visible text, label or accessible name is left outside a catalogue.
 */

/**
 * Text a person sees or hears that is not inside ⟦…⟧ (and is not what they typed, or the brand's
 * name), in the whole page or in one part of it (`within`, a CSS selector).
 */
async function untranslated(page: Page, allowed: readonly string[] = [], within = "body"): Promise<string[]> {
  const texts = await page.evaluate((selector) => {
    const found = new Set<string>();
    const shown = (element: Element) => {
      const style = getComputedStyle(element);
      return style.display !== "none" && style.visibility !== "hidden" && !element.closest("[hidden]");
    };
    // A message with a link inside (<link>Create one</link>) is several text nodes: judge the
    // whole of the nearest block around each, which holds the message's markers.
    const blockOf = (element: Element): Element => {
      let current = element;
      while (current.parentElement && getComputedStyle(current).display.startsWith("inline")) current = current.parentElement;
      return current;
    };
    const visit = (root: Node) => {
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT | NodeFilter.SHOW_ELEMENT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node instanceof Element) {
          // The ALTCHA widget draws its words in its own shadow root.
          if (node.shadowRoot) visit(node.shadowRoot);
          for (const name of ["aria-label", "placeholder", "title", "alt"]) {
            const value = node.getAttribute(name);
            if (value) found.add(value);
          }
          continue;
        }
        const parent = node.parentElement;
        if (!parent || ["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE"].includes(parent.tagName) || !(node.textContent ?? "").trim()) continue;
        // sr-only text is heard, so it counts; display:none text is neither seen nor heard.
        if (shown(parent)) found.add((blockOf(parent) as HTMLElement).innerText ?? node.textContent ?? "");
      }
    };
    visit(document.querySelector(selector)!);
    return [...found];
  }, within);
  const outside = (text: string) =>
    text
      .replace(/⟦[^⟦⟧]*(⟦[^⟦⟧]*⟧[^⟦⟧]*)*⟧/g, "")
      .split(/\s+/)
      .filter((word) => word && !/^[\p{P}\p{S}\d]+$/u.test(word) && !allowed.some((ok) => ok.split(/\s+/).includes(word)));
  return texts.flatMap((text) => (outside(text).length > 0 ? [text.trim()] : []));
}

// The brand's name, and each language's own name in the switch (an autonym is never translated).
const NOT_OURS = ["Gatehouse", "English", "Deutsch"];

/** Fails on any text outside a catalogue's markers, besides the brand, the languages' names and what was `typed`. */
async function expectTranslated(page: Page, ...typed: string[]) {
  expect(await untranslated(page, [...NOT_OURS, ...typed])).toEqual([]);
}

/** Sends the page's hydrated form with its submit button. */
async function send(page: Page) {
  await page.locator("form[data-hydrated] button[type=submit]").click();
}

/** A form's page as it opens, then sent empty: its field errors. */
async function openThenSendEmpty(page: Page, path: string) {
  await page.goto(path);
  await waitForForm(page);
  await expectTranslated(page);
  await send(page);
  await expect(page.locator(".field-error").first()).toBeVisible();
  await expectTranslated(page);
}

/** The right password, sent from the sign-in page (its labels are in markers, so by id). */
async function signInOnPage(page: Page, email: string) {
  await page.goto("/sign-in");
  await waitForForm(page);
  await page.locator("#sign-in-email").fill(email);
  await page.locator("#sign-in-password").fill(PASSWORD);
  await send(page);
}

/** An account ready to sign in, for a test that first sends attempts of its own (a longer timeout). */
async function slowAccount(request: APIRequestContext, prefix: string): Promise<string> {
  test.setTimeout(120_000);
  const email = uniqueEmail(prefix);
  expect((await registerApi(request, email, PASSWORD)).status()).toBe(202);
  return email;
}

async function inPseudoLocale(page: Page) {
  const { hostname } = new URL(page.url() === "about:blank" ? "http://127.0.0.1" : page.url());
  await page.context().addCookies([{ name: "gatehouse-locale", value: "xx", domain: hostname, path: "/" }]);
}

test("a German browser gets the page in German, and <html lang> says so", async ({ browser, baseURL }) => {
  const context = await browser.newContext({ locale: "de-DE", extraHTTPHeaders: { "Accept-Language": "de-DE,de;q=0.9" } });
  const page = await context.newPage();
  await page.goto(`${baseURL}/sign-in`);
  await expect(page.locator("html")).toHaveAttribute("lang", "de");
  await expect(page.getByRole("heading", { name: "Anmelden" })).toBeVisible();
  await expect(page.getByLabel("E-Mail-Adresse")).toBeVisible();
  await context.close();
});

test("the footer's switch changes the language, without JavaScript too", async ({ browser, baseURL }) => {
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto(`${baseURL}/sign-in?callbackUrl=%2Faccount`);
  await expect(page.locator("html")).toHaveAttribute("lang", "en");
  await page.getByLabel("Language").selectOption("de");
  await page.getByRole("button", { name: "Change language" }).click();
  await expect(page).toHaveURL(/\/sign-in$/);
  await expect(page.locator("html")).toHaveAttribute("lang", "de");
  await page.getByLabel("Sprache").selectOption("en");
  await page.getByRole("button", { name: "Sprache ändern" }).click();
  await expect(page.locator("html")).toHaveAttribute("lang", "en");
  await context.close();
});

test.describe("in the pseudo-locale, every visible string comes from a catalogue", () => {
  test.beforeEach(async ({ page, baseURL }) => {
    await page.goto(`${baseURL}/api/health`);
    await inPseudoLocale(page);
  });

  test("the sign-in page: empty, with field errors, after a wrong password", async ({ page }) => {
    await page.goto("/sign-in");
    await waitForForm(page);
    await expect(page.locator("html")).toHaveAttribute("lang", "xx");
    await expectTranslated(page);

    await send(page);
    await expect(page.locator(".field-error").first()).toBeVisible();
    await expectTranslated(page);

    const email = uniqueEmail("pseudo");
    await page.locator("#sign-in-email").fill(email);
    await page.locator("#sign-in-password").fill(PASSWORD);
    await send(page);
    await expect(page.getByTestId("sign-in-error-message")).not.toBeEmpty({ timeout: 30_000 });
    await expectTranslated(page, email);
  });

  test("the home page signed out, and the 404 page", async ({ page }) => {
    await page.goto("/");
    await expect(page.getByTestId("who")).toBeVisible();
    await expectTranslated(page);
    await page.goto("/no-such-page");
    await expect(page.locator("h1")).toBeVisible();
    await expectTranslated(page);
  });

  test("registration: empty, with field errors, check your email, sent again, another address", async ({ page }) => {
    await openThenSendEmpty(page, "/register");

    // A short password: the rule's sentence under the field and the strength meter's.
    const email = uniqueEmail("pseudo-register");
    await page.locator("#register-email").fill(email);
    await page.locator("#register-password").fill("short");
    await send(page);
    await expect(page.locator("#register-password-error")).toBeVisible();
    await expectTranslated(page, email);

    await page.locator("#register-password").fill(PASSWORD);
    await send(page);
    await expect(page.getByTestId("register-sent")).not.toBeEmpty({ timeout: 30_000 });
    await expectTranslated(page, email);

    await page.locator("form.email-me button[type=submit]").click();
    await expect(page.getByTestId("resent")).not.toBeEmpty({ timeout: 30_000 });
    await expectTranslated(page, email);

    // "Use another address", the first of the group the wrong-address line names.
    await page.locator("#register-wrong-address + [role=group] button").first().click();
    await waitForForm(page);
    await expectTranslated(page);
  });

  test("forgot password: empty, with a field error, sent", async ({ page }) => {
    await openThenSendEmpty(page, "/forgot-password");

    const email = uniqueEmail("pseudo-forgot");
    await page.locator("#forgot-email").fill(email);
    await send(page);
    await expect(page.getByTestId("forgot-sent")).not.toBeEmpty({ timeout: 30_000 });
    await expectTranslated(page, email);
  });

  test("the emailed-link pages: without a token, the form, its field errors, a spent link", async ({ page }) => {
    // A token of the right shape that was never issued: the server's answer is the spent link's.
    const token = "A".repeat(43);
    await page.goto(`/reset-password#token=${token}`);
    await waitForForm(page);
    await expectTranslated(page);
    await page.locator("#link-password").fill("short");
    await send(page);
    await expect(page.locator("#link-password-error")).toBeVisible();
    await expectTranslated(page);
    await page.locator("#link-password").fill(PASSWORD);
    await send(page);
    await expect(page.getByTestId("link-error")).toHaveAttribute("data-error", "invalid_token");
    await expectTranslated(page);

    await page.goto(`/verify-email#token=${token}`);
    await waitForForm(page);
    await expectTranslated(page);
    await send(page);
    await expect(page.locator("#link-password-error")).toBeVisible();
    await expectTranslated(page);

    await page.goto(`/unlock#token=${token}`);
    await waitForForm(page);
    await expectTranslated(page);
    await send(page);
    await expect(page.getByTestId("link-error")).toHaveAttribute("data-error", "invalid_token");
    await expectTranslated(page);

    // Without a token, reached from another path (on the same one, a new fragment alone loads nothing).
    await page.goto("/reset-password");
    await expect(page.getByTestId("link-missing")).toBeVisible();
    await expectTranslated(page);
  });

  test("a locked account: the lock banner, a new link by email, the unlock page naming the account, then sign-in", async ({
    page,
    request,
    newClient,
  }) => {
    const email = await slowAccount(request, "pseudo-lock");
    for (let i = 0; i < Number(process.env.E2E_LOCKOUT_THRESHOLD); i++) await signInApi(await newClient(), email, "wrong password");
    const lockMail = await mailTo(email, /sign-in to your .* account is paused/i);

    await signInOnPage(page, email);
    await expect(page.getByTestId("sign-in-error")).toHaveAttribute("data-error", "locked", { timeout: 30_000 });
    await expect(page.getByTestId("lock-way-out")).toBeVisible();
    await expectTranslated(page, email);

    await page.getByTestId("lock-way-out").locator("button[type=submit]").click();
    await expect(page.getByTestId("unlock-requested")).not.toBeEmpty({ timeout: 30_000 });
    await expectTranslated(page, email);

    // Asking sent a new link, which replaces the lock's own (issue 55).
    await expect.poll(async () => (await mailTo(email, /sign-in to your .* account is paused/i)).link).not.toBe(lockMail.link);
    await page.goto((await mailTo(email, /sign-in to your .* account is paused/i)).link);
    await expect(page.getByTestId("link-account")).toBeVisible();
    await expectTranslated(page);
    await send(page);
    await expect(page).toHaveURL(/\/sign-in\?done=unlocked/);
    await expect(page.getByTestId("sign-in-done")).toBeVisible();
    await expectTranslated(page, email);
  });

  test("a new device: the emailed-code step, a wrong code, then home with the failures before it and sign-out", async ({
    page,
    request,
    newClient,
  }) => {
    const email = await slowAccount(request, "pseudo-device");
    expect((await signInApi(await newClient(), email, PASSWORD)).kind).toBe("signed-in");
    for (let i = 0; i < 2; i++) expect((await signInApi(await newClient(), email, "wrong password")).kind).toBe("invalid");

    await signInOnPage(page, email);
    await expect(page.getByTestId("second-step")).toBeVisible({ timeout: 30_000 });
    await expectTranslated(page);

    // An empty answer, then a wrong code.
    await page.locator("[data-testid=second-step] button[type=submit]").click();
    await expect(page.getByTestId("second-step-error")).toHaveAttribute("data-error", "invalid_input");
    await expectTranslated(page);
    const mail = await mailTo(email, /sign in to .* on a new device/i);
    const code = /enter this code: (\d{6})/.exec(mail.text ?? "")?.[1];
    expect(code).toMatch(/^\d{6}$/);
    await page.locator("#second-step-answer").fill(String((Number(code) + 1) % 1_000_000).padStart(6, "0"));
    await page.locator("[data-testid=second-step] button[type=submit]").click();
    await expect(page.getByTestId("second-step-error")).not.toHaveAttribute("data-error", "invalid_input");
    await expect(page.getByTestId("second-step-error-message")).not.toBeEmpty();
    await expectTranslated(page);

    await page.locator("#second-step-answer").fill(code!);
    await page.locator("[data-testid=second-step] button[type=submit]").click();
    await expect(page.getByTestId("failures-before-sign-in")).toBeVisible();
    await expectTranslated(page, email);
  });
});

/**
 * The account page's own part (the header and footer around it are every page's, checked with
 * the pages above). What it shows that is the account's own, not a sentence of ours: its email, the
 * networks it was used from ("10.1.2.x"), and what it was shown once (the app's key, the codes).
 */
async function accountsOwn(page: Page, email: string, more: readonly string[] = []): Promise<string[]> {
  const networks = (await page.locator("body").innerText()).match(/\b\d+\.\d+\.\d+\.x\b/g) ?? [];
  return [...NOT_OURS, email, ...networks, ...more];
}

test.describe("in the pseudo-locale, the account page and its API speak only from catalogues", () => {
  test("sessions and events listed, an authenticator app set up and on, change-password errors, the API's refusals", async ({
    page,
    newClient,
    baseURL,
  }) => {
    test.setTimeout(180_000);
    // Signed in in English; the rest of the test is in the pseudo-locale.
    const email = await accountOnPage(page, newClient, "pseudo-account");
    // An API session and a stranger's wrong password: a second list and a failure among the events.
    const api = await newClient();
    const token = await api.post("/api/v1/authentication/token", { data: { email, password: PASSWORD, altcha: await altchaPayload(api) } });
    expect(token.status()).toBe(200);
    expect((await signInApi(await newClient(), email, "a stranger's guess")).kind).toBe("invalid");
    await inPseudoLocale(page);
    await page.goto("/account");
    await expect(page.locator("html")).toHaveAttribute("lang", "xx");
    await expect(page.getByTestId("api-sessions")).toBeVisible();
    await expect(page.getByTestId("security-events").locator('tr[data-kind="sign_in_failed"]')).toHaveCount(1);
    await expect(page.getByTestId("security-events").locator('tr[data-kind="refresh_family_created"]')).toHaveCount(1);
    // Hydrated: the times are the viewer's, from the catalogue's date formats.
    await waitForForm(page);
    expect(await untranslated(page, await accountsOwn(page, email), "main")).toEqual([]);

    // An authenticator app: being set up, a wrong first code, its recovery codes, then on.
    await page.getByRole("button", { name: /Set up an authenticator app/ }).click();
    await expect(page.getByTestId("totp-setup")).toBeVisible();
    const key = (await page.getByTestId("totp-secret").textContent())!;
    expect(await untranslated(page, await accountsOwn(page, email, [key]), "main")).toEqual([]);
    const secret = key.replace(/\s/g, "");
    await page.locator("#totp-code").fill("12");
    await page.getByRole("button", { name: /Turn on/ }).click();
    await expect(page.locator(".field-error")).toBeVisible();
    expect(await untranslated(page, await accountsOwn(page, email, [key]), "main")).toEqual([]);
    await page.locator("#totp-code").fill(String((Number(codeAt(secret, Date.now())) + 1) % 1_000_000).padStart(6, "0"));
    await page.getByRole("button", { name: /Turn on/ }).click();
    await expect(page.getByTestId("second-factor-error-message")).not.toBeEmpty();
    expect(await untranslated(page, await accountsOwn(page, email, [key]), "main")).toEqual([]);
    await page.locator("#totp-code").fill(codeAt(secret, Date.now()));
    await page.getByRole("button", { name: /Turn on/ }).click();
    await expect(page.getByTestId("recovery-codes").locator("code")).toHaveCount(10);
    const codes = await page.getByTestId("recovery-codes").locator("code").allTextContents();
    expect(await untranslated(page, await accountsOwn(page, email, [key, ...codes]), "main")).toEqual([]);
    await page.getByRole("button", { name: /I have saved them/ }).click();
    await expect(page.getByTestId("recovery-codes-left")).toBeVisible();
    expect(await untranslated(page, await accountsOwn(page, email), "main")).toEqual([]);

    // Change password: the form's own checks, then the server's answer to a wrong current password.
    const form = page.getByTestId("change-password");
    await form.locator("button[type=submit]").click();
    await expect(form.locator(".field-error").first()).toBeVisible();
    expect(await untranslated(page, await accountsOwn(page, email), "main")).toEqual([]);
    await page.locator("#current-password").fill("not the password of this account");
    await page.locator("#new-password").fill("an entirely different and long passphrase");
    await form.locator("button[type=submit]").click();
    await expect(page.getByTestId("change-password-error-message")).not.toBeEmpty({ timeout: 30_000 });
    expect(await untranslated(page, await accountsOwn(page, email), "main")).toEqual([]);

    // Every account route's JSON refusal says its message from a catalogue, in the request's language.
    const formToken = await page.locator('input[name="formToken"]').first().inputValue();
    const paths = [
      "/api/account/password",
      "/api/account/reauthenticate",
      "/api/account/reauthenticate/passkey",
      "/api/account/passkeys",
      "/api/account/passkeys/options",
      "/api/account/passkeys/rename",
      "/api/account/passkeys/remove",
      "/api/account/passkeys/second-factor",
      "/api/account/totp/setup",
      "/api/account/totp/confirm",
      "/api/account/sessions/revoke",
      "/api/account/devices/forget",
      "/api/account/delete",
    ];
    const refusals: string[] = [];
    for (const path of paths) {
      const attempts: Record<string, string>[] = [
        { formToken, json: "true", id: "00000000-0000-0000-0000-000000000000" },
        { json: "true" },
      ];
      for (const fields of attempts) {
        const res = await page.request.post(path, {
          form: fields,
          headers: { origin: baseURL!, "sec-fetch-site": "same-origin" },
          maxRedirects: 0,
        });
        if (res.status() < 400 || !(res.headers()["content-type"] ?? "").includes("json")) continue;
        const body = (await res.json()) as { error?: string; message?: string };
        if (typeof body.message !== "string") continue;
        refusals.push(`${path} ${res.status()} ${body.error}`);
        expect(body.message, `${path} ${res.status()} ${body.error}`).toMatch(/^⟦[^]*⟧$/);
        expect(body.error, path).toMatch(/^[a-z_]+$/);
        expect(res.headers()["content-language"], path).toBe("xx");
      }
    }
    // Each route refused at least the request without its form token.
    expect(refusals.length, refusals.join("\n")).toBeGreaterThanOrEqual(paths.length);
  });

  test("with a passkey", async ({ browser }, testInfo) => {
    // WebAuthn needs a domain RP ID: an instance of its own at http://localhost:PORT, which starts
    // (and migrates a fresh database) slowly on a loaded machine.
    test.setTimeout(300_000);
    const instance = await startInstance(
      {
        ...sharedSecrets(),
        DATABASE_URL: `pglite:${process.env.E2E_DATA_DIR}-pseudo-passkeys-${testInfo.retry}`,
        I18N_PSEUDO_LOCALE: "true",
      },
      { hostname: "localhost", startTimeoutMs: 150_000 },
    );
    const client = await playwrightRequest.newContext({ baseURL: instance.baseURL, extraHTTPHeaders: { "X-Forwarded-For": "10.201.0.1" } });
    const context = await browser.newContext({ baseURL: instance.baseURL });
    try {
      const email = uniqueEmail("pseudo-passkey");
      expect((await registerApi(client, email, PASSWORD)).status()).toBe(202);
      const page = await context.newPage();
      const name = await addPasskeyOnAccountPage(page, email);

      await inPseudoLocale(page);
      await page.goto("/account");
      await expect(page.locator("html")).toHaveAttribute("lang", "xx");
      await expect(page.getByTestId("passkey-second-factor-status")).toBeVisible();
      await waitForForm(page);
      // The passkey's name is the owner's (they may rename it), and the input holding it too.
      expect(await untranslated(page, await accountsOwn(page, email, [name]), "main")).toEqual([]);
    } finally {
      await context.close();
      await client.dispose();
      await instance.stop();
    }
  });
});

import type { Page } from "@playwright/test";
import { PASSWORD, uniqueEmail, waitForForm } from "./helpers/accounts";
import { expect, test } from "./helpers/serverGrid";

/**
 * Languages in the browser: a German browser gets German pages, the footer's switch changes the
 * language and <html lang>, and in the pseudo-locale (every catalogue message wrapped in ⟦…⟧)
 * no visible text, label or accessible name is left outside a catalogue.
 */

/** Text a person sees or hears that is not inside ⟦…⟧ (and is not what they typed, or the brand's name). */
async function untranslated(page: Page, allowed: readonly string[] = []): Promise<string[]> {
  const texts = await page.evaluate(() => {
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
    visit(document.body);
    return [...found];
  });
  const outside = (text: string) =>
    text
      .replace(/⟦[^⟦⟧]*(⟦[^⟦⟧]*⟧[^⟦⟧]*)*⟧/g, "")
      .split(/\s+/)
      .filter((word) => word && !/^[\p{P}\p{S}\d]+$/u.test(word) && !allowed.some((ok) => ok.split(/\s+/).includes(word)));
  return texts.flatMap((text) => (outside(text).length > 0 ? [text.trim()] : []));
}

// The brand's name, and each language's own name in the switch (an autonym is never translated).
const NOT_OURS = ["Gatehouse", "English", "Deutsch"];

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
    expect(await untranslated(page, NOT_OURS)).toEqual([]);

    await page.locator("form[data-hydrated] button[type=submit]").click();
    await expect(page.locator(".field-error").first()).toBeVisible();
    expect(await untranslated(page, NOT_OURS)).toEqual([]);

    const email = uniqueEmail("pseudo");
    await page.locator("#sign-in-email").fill(email);
    await page.locator("#sign-in-password").fill(PASSWORD);
    await page.locator("form[data-hydrated] button[type=submit]").click();
    await expect(page.getByTestId("sign-in-error-message")).not.toBeEmpty({ timeout: 30_000 });
    expect(await untranslated(page, [...NOT_OURS, email])).toEqual([]);
  });
});

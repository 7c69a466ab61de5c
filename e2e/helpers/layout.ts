import AxeBuilder from "@axe-core/playwright";
import { expect, type Locator, type Page } from "@playwright/test";

/** The review's two sizes: a phone and a laptop. */
export const VIEWPORTS = [
  { width: 390, height: 844 },
  { width: 1280, height: 800 },
] as const;

/**
 * A field drawn in the app's style, as a target a finger can hit: at least 44 px high, bordered
 * and rounded (a browser's default input is 21 px high, square, with an inset border).
 */
export async function expectAppField(field: Locator) {
  const box = await field.boundingBox();
  expect(box, "the field is on the page").not.toBeNull();
  expect(box!.height).toBeGreaterThanOrEqual(44);
  expect(box!.width).toBeGreaterThanOrEqual(120);
  const style = await field.evaluate((element) => {
    const computed = getComputedStyle(element);
    return { borderStyle: computed.borderTopStyle, radius: computed.borderTopLeftRadius };
  });
  expect(style).toEqual({ borderStyle: "solid", radius: "6px" });
}

/** A button a finger can hit: at least 44 px high and 44 px wide. */
export async function expectTarget(target: Locator) {
  const box = (await target.boundingBox())!;
  expect(box.height).toBeGreaterThanOrEqual(44);
  expect(box.width).toBeGreaterThanOrEqual(44);
}

/** Two controls apart: at least `gapPx` of space between their boxes, across or down. */
export async function expectApart(first: Locator, second: Locator, gapPx = 8) {
  const a = (await first.boundingBox())!;
  const b = (await second.boundingBox())!;
  const across = Math.max(b.x - (a.x + a.width), a.x - (b.x + b.width));
  const down = Math.max(b.y - (a.y + a.height), a.y - (b.y + b.height));
  expect(Math.max(across, down), "the space between the two").toBeGreaterThanOrEqual(gapPx);
}

/** axe finds nothing on the page as it stands. */
export async function expectNoAxeViolations(page: Page) {
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
}

/** The visitor's language, as the footer's switch sets it. */
export async function useLanguage(page: Page, locale: "en" | "de", baseURL: string) {
  await page.context().addCookies([{ name: "gatehouse-locale", value: locale, url: baseURL }]);
}

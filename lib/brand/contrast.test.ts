import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { brandPalette, contrastRatio, FOCUS_CONTRAST, lighten, relativeLuminance, SURFACES, TEXT_CONTRAST } from "./contrast";

describe("WCAG 2.2 contrast", () => {
  it("matches known pairs", () => {
    expect(contrastRatio("#767676", "#ffffff")).toBeCloseTo(4.54, 2);
    expect(contrastRatio("#000000", "#ffffff")).toBeCloseTo(21, 5);
    expect(contrastRatio("#ffffff", "#ffffff")).toBe(1);
    // #777777 on white is 4.48:1: just failing AA, the classic near-miss.
    expect(contrastRatio("#1f5fbf", "#ffffff")).toBeCloseTo(6.09, 2);
    expect(contrastRatio("#777777", "#ffffff")).toBeCloseTo(4.48, 2);
  });

  it("is symmetric and uses the 0.04045 threshold of the sRGB curve", () => {
    expect(contrastRatio("#ffffff", "#767676")).toBe(contrastRatio("#767676", "#ffffff"));
    expect(relativeLuminance("#0a0a0a")).toBeCloseTo(10 / 255 / 12.92, 8);
    expect(relativeLuminance("#ff0000")).toBeCloseTo(0.2126, 4);
  });

  it("lightens toward white", () => {
    expect(lighten("#000000", 0.5)).toBe("#808080");
    expect(lighten("#1f5fbf", 0)).toBe("#1f5fbf");
    expect(lighten("#1f5fbf", 1)).toBe("#ffffff");
  });
});

describe("the brand palette", () => {
  it("keeps a readable colour in the light theme and derives a lighter dark-theme shade that reads", () => {
    const { palette, problems } = brandPalette("#B3261E");
    expect(problems).toEqual([]);
    expect(palette.light.accent).toBe("#b3261e");
    expect(palette.light.accentText).toBe("#ffffff");
    expect(palette.dark.accent).not.toBe("#b3261e");
    for (const surface of Object.values(SURFACES.dark)) {
      expect(contrastRatio(palette.dark.accent, surface)).toBeGreaterThanOrEqual(TEXT_CONTRAST);
      expect(contrastRatio(palette.dark.focus, surface)).toBeGreaterThanOrEqual(FOCUS_CONTRAST);
    }
    expect(contrastRatio(palette.dark.accentText, palette.dark.accent)).toBeGreaterThanOrEqual(TEXT_CONTRAST);
    // The shade found is the first that reads: one step darker does not.
    expect(contrastRatio(palette.dark.accent, SURFACES.dark.card)).toBeLessThan(TEXT_CONTRAST + 1.5);
  });

  it("finds a dark-theme shade even for black, and a label for its button", () => {
    const { palette, problems } = brandPalette("#000000");
    expect(problems).toEqual([]);
    expect(palette.light).toEqual({ accent: "#000000", accentText: "#ffffff", focus: "#000000" });
    expect(palette.dark.accentText).toBe("#0f1115");
    expect(contrastRatio(palette.dark.accent, SURFACES.dark.card)).toBeGreaterThanOrEqual(TEXT_CONTRAST);
  });

  it("refuses a colour too light to read on the light theme, naming the pairs", () => {
    const { problems } = brandPalette("#ffcc00");
    expect(problems.map((p) => `${p.theme}: ${p.pair}`)).toEqual(
      expect.arrayContaining(["light: links on --bg #f6f7f9", "light: links on --card #ffffff", "light: focus ring on --card #ffffff"]),
    );
    expect(problems.every((p) => p.ratio < p.minimum)).toBe(true);
  });

  it("refuses a colour between 3:1 and 4.5:1 for text, though its focus ring would pass", () => {
    const { problems } = brandPalette("#888888");
    expect(problems.some((p) => p.pair.startsWith("links"))).toBe(true);
    expect(problems.some((p) => p.pair.startsWith("focus"))).toBe(false);
  });

  it("is checked against the surfaces app/globals.css really paints", () => {
    const css = fs.readFileSync("app/globals.css", "utf8");
    const dark = css.slice(css.indexOf("@media (prefers-color-scheme: dark)"));
    const light = css.slice(0, css.indexOf("@media (prefers-color-scheme: dark)"));
    const variable = (block: string, name: string) => new RegExp(`--${name}:\\s*(#[0-9a-f]{6})`, "i").exec(block)?.[1];
    expect({ bg: variable(light, "bg"), card: variable(light, "card") }).toEqual(SURFACES.light);
    expect({ bg: variable(dark, "bg"), card: variable(dark, "card") }).toEqual(SURFACES.dark);
  });
});

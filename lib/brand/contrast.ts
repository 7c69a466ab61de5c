/**
 * WCAG 2.2 contrast, and the brand colour's palette for both themes. Pure: the start refuses a
 * BRAND_COLOR that this says people cannot read (lib/config/env.ts).
 */

const HEX = /^#([0-9a-f]{6})$/i;

export function isHexColor(value: string): boolean {
  return HEX.test(value);
}

function channels(hex: string): [number, number, number] {
  const match = HEX.exec(hex);
  if (!match) throw new Error(`not a #rrggbb colour: ${hex}`);
  const value = Number.parseInt(match[1]!, 16);
  return [(value >> 16) & 255, (value >> 8) & 255, value & 255];
}

function toHex([r, g, b]: [number, number, number]): string {
  return `#${[r, g, b].map((c) => Math.round(c).toString(16).padStart(2, "0")).join("")}`;
}

/** WCAG 2.2 relative luminance of an sRGB colour (0 black … 1 white). */
export function relativeLuminance(hex: string): number {
  const [r, g, b] = channels(hex).map((c) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** The WCAG contrast ratio of two colours, 1 to 21, whichever is lighter. */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** `fraction` of the way from `hex` to white (0 is the colour, 1 is white). */
export function lighten(hex: string, fraction: number): string {
  return toHex(channels(hex).map((c) => c + (255 - c) * fraction) as [number, number, number]);
}

/** WCAG 1.4.3 for text (links on the page, the button's label), 1.4.11 for the focus ring. */
export const TEXT_CONTRAST = 4.5;
export const FOCUS_CONTRAST = 3;

/**
 * The surfaces the accent sits on, per theme: --bg and --card of app/globals.css (contrast.test.ts
 * reads the stylesheet so the two cannot drift apart).
 */
export const SURFACES = {
  light: { bg: "#f6f7f9", card: "#ffffff" },
  dark: { bg: "#0f1115", card: "#181b21" },
} as const;

/** The labels a button may carry: whichever reads better on the accent. */
export const BUTTON_TEXT = ["#ffffff", "#0f1115"] as const;

export type Theme = keyof typeof SURFACES;
/** One theme's accent (buttons, links, the logo tile), the button's label on it, and the focus ring. */
export type ThemeColors = { accent: string; accentText: string; focus: string };
export type Palette = { light: ThemeColors; dark: ThemeColors };
/** A pair below its minimum, for the start's message. */
export type ContrastProblem = { theme: Theme; pair: string; ratio: number; minimum: number };

function problemsOf(theme: Theme, colors: ThemeColors): ContrastProblem[] {
  const pairs: [string, string, string, number][] = [
    ...Object.entries(SURFACES[theme]).flatMap(([name, surface]): [string, string, string, number][] => [
      [`links on --${name} ${surface}`, colors.accent, surface, TEXT_CONTRAST],
      [`focus ring on --${name} ${surface}`, colors.focus, surface, FOCUS_CONTRAST],
    ]),
    [`button text ${colors.accentText} on the button`, colors.accentText, colors.accent, TEXT_CONTRAST],
  ];
  return pairs.flatMap(([pair, a, b, minimum]) => {
    const ratio = contrastRatio(a, b);
    return ratio < minimum ? [{ theme, pair, ratio, minimum }] : [];
  });
}

function themeColors(accent: string): ThemeColors {
  const accentText = [...BUTTON_TEXT].sort((a, b) => contrastRatio(b, accent) - contrastRatio(a, accent))[0]!;
  return { accent, accentText, focus: accent };
}

/** The shade the dark theme uses: the brand colour itself when it reads there, else lightened in 5% steps until it does. */
function darkShade(brand: string): string {
  for (let step = 0; step <= 20; step++) {
    const candidate = lighten(brand, step / 20);
    if (problemsOf("dark", themeColors(candidate)).length === 0) return candidate;
  }
  return brand;
}

/**
 * The light theme uses the brand colour as given (it is the brand: it is not changed behind its
 * owner's back); the dark theme derives a lighter shade where the colour is too dark to read on
 * it. Problems lists every pair still below its minimum: empty, or the start is refused.
 */
export function brandPalette(brand: string): { palette: Palette; problems: ContrastProblem[] } {
  const palette = { light: themeColors(brand.toLowerCase()), dark: themeColors(darkShade(brand.toLowerCase())) };
  return { palette, problems: [...problemsOf("light", palette.light), ...problemsOf("dark", palette.dark)] };
}

/** One line for the start's refusal, naming each pair and its ratio. */
export function describeProblems(problems: ContrastProblem[]): string {
  return problems.map((p) => `${p.theme} theme, ${p.pair}: ${p.ratio.toFixed(2)}:1 (needs ${p.minimum}:1)`).join("; ");
}

import { describe, expect, it } from "vitest";
import { englishTranslator } from "@/lib/i18n/sentence";
import { aboutDuration as about, formatDuration as format } from "./refusal-banner";

const t = englishTranslator();
const formatDuration = (seconds: number) => format(seconds, t);
const aboutDuration = (ms: number) => about(ms, t);

describe("formatDuration", () => {
  it("says seconds under a minute", () => {
    expect([0, 1, 26, 59].map(formatDuration)).toEqual(["0 s", "1 s", "26 s", "59 s"]);
  });

  it("rounds a fraction of a second up, so the wait is never understated", () => {
    expect(formatDuration(0.2)).toBe("1 s");
    expect(formatDuration(59.1)).toBe("1 min");
    expect(formatDuration(-3)).toBe("0 s");
  });

  it("says minutes and seconds under an hour, without a zero part", () => {
    expect([60, 169, 180, 3599].map(formatDuration)).toEqual(["1 min", "2 min 49 s", "3 min", "59 min 59 s"]);
  });

  it("says hours and minutes beyond, rounding the seconds up", () => {
    expect([3600, 3601, 3900, 7200].map(formatDuration)).toEqual(["1 h", "1 h 1 min", "1 h 5 min", "2 h"]);
  });
});

describe("aboutDuration", () => {
  it("rounds to the minute, and to the hour beyond one", () => {
    expect([1_000, 60_000, 89_000, 300_000, 3_300_000].map(aboutDuration)).toEqual([
      "about a minute",
      "about a minute",
      "about a minute",
      "about 5 minutes",
      "about 55 minutes",
    ]);
    expect([3_600_000, 5_000_000, 7_200_000].map(aboutDuration)).toEqual(["about an hour", "about an hour", "about 2 hours"]);
  });
});

describe("in German", () => {
  it("counts and rounds in the catalogue's words, with Intl's numbers", async () => {
    const { createI18n } = await import("@/lib/i18n/i18n");
    const de = createI18n({ defaultLocale: "en", pseudoLocale: false }).translator("de");
    expect([49, 169, 3900].map((s) => format(s, de))).toEqual(["49 s", "2 min 49 s", "1 h 5 min"]);
    expect([60_000, 300_000, 3_600_000, 7_200_000].map((ms) => about(ms, de))).toEqual([
      "etwa einer Minute",
      "etwa 5 Minuten",
      "etwa einer Stunde",
      "etwa 2 Stunden",
    ]);
  });
});

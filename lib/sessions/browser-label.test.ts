import { describe, expect, it } from "vitest";
import { browserLabel } from "./browser-label";

describe("browserLabel", () => {
  it("names a browser family and its system", () => {
    expect(
      browserLabel("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/140.0.0.0 Safari/537.36"),
    ).toBe("Chrome on Linux");
    expect(
      browserLabel("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15"),
    ).toBe("Safari on macOS");
  });

  it("shows no text of its own from a crafted or missing header", () => {
    expect(browserLabel("<script>/1.0 x")).toBe("Unknown browser");
    expect(browserLabel("")).toBe("Unknown browser");
    expect(browserLabel(null)).toBe("Unknown browser");
    expect(browserLabel("x".repeat(100_000))).toBe("Unknown browser");
  });
});

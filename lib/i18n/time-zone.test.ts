import { describe, expect, it } from "vitest";
import { validTimeZone } from "./format";

describe("validTimeZone", () => {
  it("keeps a zone Intl knows, in its canonical spelling", () => {
    expect(validTimeZone("Europe/Berlin")).toBe("Europe/Berlin");
    expect(validTimeZone("UTC")).toBe("UTC");
  });

  it("drops anything else without throwing", () => {
    for (const value of ["Mars/Olympus", "", "x".repeat(65), "Europe/Berlin\u0000", "../../etc", 42, null, { zone: "UTC" }]) {
      expect(validTimeZone(value), JSON.stringify(value)).toBeUndefined();
    }
  });
});

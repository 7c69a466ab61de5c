import { describe, expect, it } from "vitest";
import { maskEmail } from "./mask";

describe("maskEmail", () => {
  it("keeps the first character and the domain, whatever the local part's length", () => {
    expect(maskEmail("jane@example.com")).toBe("j•••@example.com");
    expect(maskEmail("j@example.com")).toBe("j•••@example.com");
    expect(maskEmail("a.very.long.name+tag@mail.example.org")).toBe("a•••@mail.example.org");
  });

  it("keeps a first character outside the BMP whole, and masks what has no local part", () => {
    expect(maskEmail("😀bob@example.com")).toBe("😀•••@example.com");
    expect(maskEmail("@example.com")).toBe("•••");
    expect(maskEmail("nobody")).toBe("•••");
  });
});

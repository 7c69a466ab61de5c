import { describe, expect, it } from "vitest";
import { normalizeEmail, registrationSchema, signInSchema } from "./credentials";

describe("normalizeEmail", () => {
  it("applies NFKC, trims and lower-cases", () => {
    expect(normalizeEmail("  Alice@Example.COM \n")).toBe("alice@example.com");
    // Full-width letters fold to ASCII under NFKC.
    expect(normalizeEmail("ＡＬＩＣＥ@example.com")).toBe("alice@example.com");
  });
});

describe("registrationSchema", () => {
  const email = "user@example.com";

  it("accepts 12 to 128 characters and normalises the email", () => {
    const result = registrationSchema.safeParse({ email: " User@Example.com", password: "x".repeat(12) });
    expect(result.success && result.data.email).toBe("user@example.com");
    expect(registrationSchema.safeParse({ email, password: "x".repeat(128) }).success).toBe(true);
  });

  it("refuses 11 and 129 characters with a message per field", () => {
    const short = registrationSchema.safeParse({ email, password: "x".repeat(11) });
    expect(short.success).toBe(false);
    expect(short.error?.issues[0]?.path).toEqual(["password"]);
    expect(registrationSchema.safeParse({ email, password: "x".repeat(129) }).success).toBe(false);
  });

  it("counts code points, not UTF-16 units", () => {
    // 12 emoji are 24 UTF-16 units but 12 characters: accepted; 65 would be 130 units yet 65 characters.
    expect(registrationSchema.safeParse({ email, password: "🔑".repeat(12) }).success).toBe(true);
    expect(registrationSchema.safeParse({ email, password: "🔑".repeat(11) }).success).toBe(false);
    expect(registrationSchema.safeParse({ email, password: "🔑".repeat(65) }).success).toBe(true);
  });

  it("refuses malformed emails, missing and non-string fields", () => {
    expect(registrationSchema.safeParse({ email: "not-an-email", password: "x".repeat(12) }).success).toBe(false);
    expect(registrationSchema.safeParse({ password: "x".repeat(12) }).success).toBe(false);
    expect(registrationSchema.safeParse({ email: 42, password: ["x"] }).success).toBe(false);
    expect(registrationSchema.safeParse(null).success).toBe(false);
  });
});

describe("signInSchema", () => {
  it("checks shape only, not the registration policy", () => {
    expect(signInSchema.safeParse({ email: "A@B.C ", password: "short" }).success).toBe(true);
    expect(signInSchema.safeParse({ email: "a@b.c", password: "" }).success).toBe(false);
    expect(signInSchema.safeParse({ email: "a@b.c", password: "x".repeat(10_000) }).success).toBe(false);
  });
});

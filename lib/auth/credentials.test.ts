import { describe, expect, it } from "vitest";
import { normalizeEmail, registrationSchema, signInSchema } from "./credentials";

describe("normalizeEmail", () => {
  it("applies NFKC, trims and lower-cases", () => {
    expect(normalizeEmail("  Alice@Example.COM \n")).toBe("alice@example.com");
    // Full-width letters fold to ASCII under NFKC.
    expect(normalizeEmail("ＡＬＩＣＥ@example.com")).toBe("alice@example.com");
  });
});

/** `length` characters cycling through `alphabet`: no short unit repeated, on no blocklist. */
function varied(length: number, alphabet = "qmzkwbxjvpnrtyshgdlfcaeiou"): string {
  const chars = [...alphabet];
  return Array.from({ length }, (_, i) => chars[i % chars.length]).join("");
}
const EMOJI = "🔑🦊🐙🌵🎈🧭🪁🍋🛶🎻🦉🌋🧩";

describe("registrationSchema", () => {
  const email = "user@example.com";

  it("accepts 15 to 128 characters and normalises the email", () => {
    const result = registrationSchema.safeParse({ email: " User@Example.com", password: varied(15) });
    expect(result.success && result.data.email).toBe("user@example.com");
    expect(registrationSchema.safeParse({ email, password: varied(128) }).success).toBe(true);
  });

  it("refuses 14 and 129 characters with a message per field", () => {
    const short = registrationSchema.safeParse({ email, password: varied(14) });
    expect(short.success).toBe(false);
    expect(short.error?.issues[0]).toMatchObject({ path: ["password"], message: "Use at least 15 characters." });
    expect(registrationSchema.safeParse({ email, password: varied(129) }).success).toBe(false);
  });

  it("counts code points, not UTF-16 units", () => {
    // 15 emoji are 30 UTF-16 units but 15 characters: accepted; 65 would be 130 units yet 65 characters.
    expect(registrationSchema.safeParse({ email, password: varied(15, EMOJI) }).success).toBe(true);
    expect(registrationSchema.safeParse({ email, password: varied(14, EMOJI) }).success).toBe(false);
    expect(registrationSchema.safeParse({ email, password: varied(65, EMOJI) }).success).toBe(true);
  });

  it("refuses a common, repetitive, email-bearing or guessable password, saying why in the password field", () => {
    const cases: [string, RegExp][] = [
      ["passwordpassword", /common passwords/],
      ["aaaaaaaaaaaaaaaa", /repeated/],
      ["user@example.com is me", /email/],
      ["qwertyuiopasdfghjkl", /patterns that attackers try early/],
    ];
    for (const [password, why] of cases) {
      const result = registrationSchema.safeParse({ email: "User@Example.com", password });
      expect(result.success, password).toBe(false);
      expect(result.error?.issues[0]).toMatchObject({ path: ["password"], message: expect.stringMatching(why) });
    }
    const tooLong = registrationSchema.safeParse({ email, password: varied(10_000) });
    expect(tooLong.error?.issues[0]).toMatchObject({ path: ["password"], message: "Use at most 128 characters." });
  });

  it("refuses malformed emails, missing and non-string fields", () => {
    expect(registrationSchema.safeParse({ email: "not-an-email", password: varied(15) }).success).toBe(false);
    expect(registrationSchema.safeParse({ password: varied(15) }).success).toBe(false);
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

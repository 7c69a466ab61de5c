import { describe, expect, it } from "vitest";
import { isCommonPassword } from "./common-passwords";
import { passwordProblem } from "./rules";

const check = (password: string, email = "alice.smith@example.com") =>
  passwordProblem(password, { email, isCommon: isCommonPassword })?.rule ?? null;

describe("password rules", () => {
  it("count code points of the NFC form: 12 emoji pass, 11 do not, 129 characters are too many", () => {
    expect(check("🦊🐙🌵🎈🧭🪁🍋🛶🎻🦉🌋🧩")).toBeNull();
    expect(check("🦊🐙🌵🎈🧭🪁🍋🛶🎻🦉🌋")).toBe("too_short");
    // "é" typed as e + combining accent is one character once composed.
    expect(check("cafe\u0301 au lai")).toBe("too_short");
    expect(check("cafe\u0301 au lait")).toBeNull();
    expect(check("x".repeat(64) + "y".repeat(65))).toBe("too_long");
    expect(check("a".repeat(10_000))).toBe("too_long");
  });

  it("refuse passwords from the common-password list, whatever their case or width", () => {
    expect(check("passwordpassword")).toBe("common");
    expect(check("PasswordPassword")).toBe("common");
    expect(check("ｐａｓｓｗｏｒｄｐａｓｓｗｏｒｄ")).toBe("common");
    expect(check("123456789012")).toBe("common");
    expect(check("correct horse battery staple")).toBeNull();
  });

  it("refuse one short sequence repeated", () => {
    for (const password of ["aaaaaaaaaaaa", "abababababab", "abcabcabcabc", "1234123412341234", "AaAaAaAaAaAa"])
      expect(check(password), password).toBe("repetitive");
    expect(check("abcdeabcdeabcde")).toBeNull();
  });

  it("refuse the email's local part inside the password when it has 4 or more characters", () => {
    expect(check("my name is alice.smith ok")).toBe("contains_email");
    expect(check("ALICE.SMITH@example.com")).toBe("contains_email");
    expect(check("bob is my favourite", "bob@example.com")).toBeNull();
    expect(check("no email given here", undefined)).toBeNull();
  });

  it("say why, in a sentence", () => {
    expect(passwordProblem("passwordpassword", { isCommon: isCommonPassword })?.message).toMatch(/common passwords/);
    expect(passwordProblem("short", { isCommon: isCommonPassword })?.message).toBe("Use at least 12 characters.");
  });
});

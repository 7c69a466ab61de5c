import { describe, expect, it } from "vitest";
import { isCommonPassword } from "./server-guesses";
import { minimumGuessesLog10, minimumPasswordLength, passwordProblem } from "./password-rules";
import { serverGuessEstimate } from "./server-guesses";

const check = (password: string, email = "alice.smith@example.com", hasOtherFactor = false) =>
  passwordProblem(password, {
    email,
    isCommon: isCommonPassword,
    minLength: minimumPasswordLength({ hasOtherFactor }),
    minGuessesLog10: minimumGuessesLog10({ hasOtherFactor }),
    estimate: serverGuessEstimate(password, email),
  })?.rule ?? null;

describe("password rules", () => {
  it("want 15 characters while the password is the only factor, 8 once there is another (NIST SP 800-63B-4 §3.1.1.2)", () => {
    expect(minimumPasswordLength({ hasOtherFactor: false })).toBe(15);
    expect(minimumPasswordLength({ hasOtherFactor: true })).toBe(8);
    expect(check("qmzkwbxjvpnrty")).toBe("too_short");
    expect(check("qmzkwbxjvpnrtys")).toBeNull();
    expect(check("qmzkwbxj", undefined, true)).toBeNull();
    expect(check("qmzkwbx", undefined, true)).toBe("too_short");
    expect(passwordProblem("short", { isCommon: isCommonPassword })?.message).toBe("Use at least 15 characters.");
  });

  it("count code points of the NFC form: 15 emoji pass, 14 do not, 129 characters are too many", () => {
    expect(check("🦊🐙🌵🎈🧭🪁🍋🛶🎻🦉🌋🧩🛸🪐🧲")).toBeNull();
    expect(check("🦊🐙🌵🎈🧭🪁🍋🛶🎻🦉🌋🧩🛸🪐")).toBe("too_short");
    // "é" typed as e + combining accent is one character once composed.
    expect(check("cafe\u0301 qmzkwbx v")).toBe("too_short");
    expect(check("cafe\u0301 qmzkwbxj v")).toBeNull();
    expect(check("x".repeat(64) + "y".repeat(65))).toBe("too_long");
    expect(check("a".repeat(10_000))).toBe("too_long");
  });

  it("refuse the patterns guessed first, from zxcvbn-ts's estimate (below 10^10 guesses), saying which", () => {
    // A keyboard walk, a phrase with digits, a sequence, a date: long enough, guessed in seconds.
    expect(check("qwertyuiopasdf", undefined, true)).toBe("guessable");
    expect(check("qwertyuiopasdfgh")).toBe("guessable");
    expect(check("iloveyou12345", undefined, true)).toBe("guessable");
    expect(check("iloveyou12345678")).toBe("guessable");
    expect(check("abcdefghijklmnopq")).toBe("guessable");
    expect(check("1987-06-05-1987")).toBe("guessable");
    expect(check("sunshine2024sunshine")).toBe("guessable");
    const estimate = serverGuessEstimate("abcdefghijklmnopq");
    expect(passwordProblem("abcdefghijklmnopq", { isCommon: () => false, estimate })?.message).toMatch(/sequence like/);
    expect(check("correct horse battery staple")).toBeNull();
    expect(check("purple monkey dishwasher")).toBeNull();
  });

  it("refuse passwords from the common-password list, whatever their case or width", () => {
    expect(check("passwordpassword")).toBe("common");
    expect(check("PasswordPassword")).toBe("common");
    expect(check("ｐａｓｓｗｏｒｄｐａｓｓｗｏｒｄ")).toBe("common");
  });

  it("refuse one short sequence repeated", () => {
    for (const password of ["aaaaaaaaaaaaaaa", "abababababababab", "abcabcabcabcabc", "1234123412341234", "AaAaAaAaAaAaAaAa"])
      expect(check(password), password).toBe("repetitive");
  });

  it("refuse the email's local part inside the password when it has 4 or more characters", () => {
    expect(check("my name is alice.smith ok")).toBe("contains_email");
    expect(check("ALICE.SMITH@example.com")).toBe("contains_email");
    expect(check("bob is my favourite qmzk", "bob@example.com")).toBeNull();
    expect(check("no email given here qmzk", undefined)).toBeNull();
  });

  it("leave the estimate out and only the other rules apply (the browser before zxcvbn-ts loads)", () => {
    expect(passwordProblem("qwertyuiopasdfgh", { isCommon: () => false })).toBeNull();
    expect(passwordProblem("passwordpassword", { isCommon: isCommonPassword })?.message).toMatch(/common passwords/);
  });
});

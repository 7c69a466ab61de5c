import { describe, expect, it } from "vitest";
import { registrationSchema, fieldErrors } from "@/lib/auth/credentials";
import { englishTranslator } from "@/lib/i18n/sentence";
import { checkSignIn as signIn, firstInvalid, stillWrong } from "./field-checks";
import { checkRegistration as registration } from "./password-checks";

const t = englishTranslator();
const checkRegistration = (email: string, password: string) => registration(email, password, t);
const checkSignIn = (email: string, password: string) => signIn(email, password, t);

const GOOD = "correct horse battery staple";

describe("checkRegistration", () => {
  it("says what is missing, in the server's words", () => {
    expect(checkRegistration("", "")).toEqual({ email: "Email is required.", password: "Password is required." });
    expect(checkRegistration("not-an-email", "short")).toEqual({
      email: "Enter a valid email address.",
      password: "Use at least 15 characters.",
    });
    expect(checkRegistration("a@example.com", "x".repeat(129))).toEqual({ password: "Use at most 128 characters." });
  });

  it("counts code points, so 15 emoji are 15 characters", () => {
    const fifteen = "🔑🚪🏠🌳🐈🍎🎈🚲📚🎵🌙⭐🦊🧭🛶";
    expect(checkRegistration("a@example.com", fifteen)).toEqual({});
    expect(checkRegistration("a@example.com", [...fifteen].slice(0, 14).join(""))).toEqual({ password: "Use at least 15 characters." });
  });

  it("accepts 254 characters of address and refuses 255", () => {
    const at254 = `${"a".repeat(242)}@example.com`;
    expect(at254).toHaveLength(254);
    expect(checkRegistration(at254, GOOD)).toEqual({});
    expect(checkRegistration(`a${at254}`, GOOD)).toEqual({ email: "That email address is too long." });
  });

  it("never refuses what the server accepts", () => {
    for (const [email, password] of [
      [" Alice@Example.com ", GOOD],
      ["kenji@example.jp", "パスワードは十五文字以上にします"],
      ["o'brien+tag@sub.example.co.uk", `${GOOD} `.repeat(5).slice(0, 128)],
    ] as const) {
      expect(registrationSchema.safeParse({ email, password }).success, email).toBe(true);
      expect(checkRegistration(email, password), email).toEqual({});
    }
  });

  it("agrees with the server on what it refuses", () => {
    for (const [email, password] of [
      ["", ""],
      ["no-at-sign", GOOD],
      ["a@example.com", "short"],
      ["a@example.com", "aaaaaaaaaaaaaaaa"],
      ["marguerite@example.com", "marguerite-in-the-garden"],
    ] as const) {
      const server = registrationSchema.safeParse({ email, password });
      expect(server.success).toBe(false);
      const client = checkRegistration(email, password);
      expect(Object.keys(client).sort()).toEqual(Object.keys(fieldErrors(server.error!)).sort());
    }
  });
});

describe("checkSignIn", () => {
  it("checks presence and shape only, no password rule", () => {
    expect(checkSignIn("", "")).toEqual({ email: "Email is required.", password: "Password is required." });
    expect(checkSignIn("a@example.com", "short")).toEqual({});
    expect(checkSignIn("a@", "x")).toEqual({ email: "Enter a valid email address." });
  });
});

describe("firstInvalid", () => {
  it("follows the form's order", () => {
    expect(firstInvalid({ password: "x", email: "y" })).toBe("email");
    expect(firstInvalid({ password: "x" })).toBe("password");
    expect(firstInvalid({})).toBeUndefined();
  });
});

describe("stillWrong", () => {
  it("drops an error once the field is corrected, keeps (in today's words) one that is still wrong, and adds none", () => {
    const shown = { email: "Email is required.", password: "Password is required." };
    expect(stillWrong(shown, checkRegistration("someone@example.com", ""))).toEqual({ password: "Password is required." });
    expect(stillWrong(shown, checkRegistration("someone", ""))).toEqual({
      email: "Enter a valid email address.",
      password: "Password is required.",
    });
    expect(stillWrong({}, checkRegistration("", ""))).toEqual({});
    expect(stillWrong({ password: "Password is required." }, checkRegistration("", "a long enough passphrase"))).toEqual({});
  });
});

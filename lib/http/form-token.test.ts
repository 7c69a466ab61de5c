import { describe, expect, it } from "vitest";
import { isSessionFormToken, sessionFormToken } from "./form-token";

const SECRET = "s".repeat(32);

describe("session form tokens", () => {
  it("verify for the session they were made for and no other", () => {
    const token = sessionFormToken(SECRET, "session-a");
    expect(isSessionFormToken(SECRET, "session-a", token)).toBe(true);
    expect(isSessionFormToken(SECRET, "session-b", token)).toBe(false);
    expect(isSessionFormToken("t".repeat(32), "session-a", token)).toBe(false);
  });

  it("refuse anything that is not the token, without throwing", () => {
    for (const presented of [undefined, "", "x", `${sessionFormToken(SECRET, "session-a")}x`, "é".repeat(43), 42, "a".repeat(10_000)]) {
      expect(isSessionFormToken(SECRET, "session-a", presented)).toBe(false);
    }
  });
});

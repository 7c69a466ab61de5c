import { describe, expect, it } from "vitest";
import { parseConfig } from "./env";

describe("parseConfig", () => {
  it("has working defaults outside production", () => {
    const config = parseConfig({});
    expect(config.ARGON2_PROFILE).toBe("owasp");
    expect(config.MAX_BODY_BYTES).toBe(16 * 1024);
    expect(config.NEXTAUTH_SECRET.length).toBeGreaterThanOrEqual(32);
  });

  it("requires a real secret and the OWASP profile in production, naming the variable", () => {
    expect(() => parseConfig({ NODE_ENV: "production" })).toThrow(/NEXTAUTH_SECRET/);
    expect(() => parseConfig({ NODE_ENV: "production", NEXTAUTH_SECRET: "s".repeat(32), ARGON2_PROFILE: "test" })).toThrow(/ARGON2_PROFILE/);
    expect(parseConfig({ NODE_ENV: "production", NEXTAUTH_SECRET: "s".repeat(32) }).NEXTAUTH_SECRET).toBe("s".repeat(32));
  });

  it("refuses malformed numbers, naming the variable", () => {
    expect(() => parseConfig({ MAX_BODY_BYTES: "lots" })).toThrow(/MAX_BODY_BYTES/);
  });
});

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

  it("refuses a malformed Redis URL or key prefix, naming the variable", () => {
    expect(() => parseConfig({ REDIS_URL: "http://127.0.0.1:6379" })).toThrow(/REDIS_URL/);
    expect(() => parseConfig({ REDIS_URL: "not a url" })).toThrow(/REDIS_URL/);
    expect(() => parseConfig({ RATE_LIMIT_KEY_PREFIX: "has space" })).toThrow(/RATE_LIMIT_KEY_PREFIX/);
    expect(() => parseConfig({ RATE_LIMIT_STORE: "memcached" })).toThrow(/RATE_LIMIT_STORE/);
    expect(parseConfig({ REDIS_URL: "rediss://cache.internal:6380/2", RATE_LIMIT_KEY_PREFIX: "app-1:" }).RATE_LIMIT_KEY_PREFIX).toBe("app-1:");
  });

  it("refuses malformed numbers, naming the variable", () => {
    expect(() => parseConfig({ MAX_BODY_BYTES: "lots" })).toThrow(/MAX_BODY_BYTES/);
  });
});

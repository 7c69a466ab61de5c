import { describe, expect, it } from "vitest";
import { digestKey, RateLimiter } from "./limiter";
import { policiesFromSpecs } from "./policies";
import type { RateLimitStore } from "./store";
import { MemoryRateLimitStore } from "./stores/memory";

const SECRET = "s".repeat(32);

describe("digestKey", () => {
  it("is keyed, fixed-length and free of the inputs", () => {
    const key = digestKey(SECRET, ["alice@example.com", "203.0.113.7"]);
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(key).not.toContain("alice");
    expect(digestKey("t".repeat(32), ["alice@example.com", "203.0.113.7"])).not.toBe(key);
  });

  it("cannot be forged by moving a separator between parts", () => {
    expect(digestKey(SECRET, ["a|b", "c"])).not.toBe(digestKey(SECRET, ["a", "b|c"]));
    expect(digestKey(SECRET, ["ab", "c"])).not.toBe(digestKey(SECRET, ["a", "bc"]));
  });
});

describe("RateLimiter", () => {
  const policies = policiesFromSpecs({ signInUsername: "2/1m" });

  it("applies the named policy per key", async () => {
    let now = 1_000_000;
    const limiter = new RateLimiter(new MemoryRateLimitStore({ clock: () => now }), policies, SECRET, () => now);
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push((await limiter.consume("signInUsername", ["alice", "1.2.3.4"])).allowed);
    expect(outcomes).toEqual([true, true, false]);
    expect((await limiter.consume("signInUsername", ["alice", "5.6.7.8"])).allowed).toBe(true);
    now += 30_000;
    expect((await limiter.consume("signInUsername", ["alice", "1.2.3.4"])).allowed).toBe(true);
  });

  it("fails closed or open as each policy says when the store throws", async () => {
    const broken: RateLimitStore = { kind: "memory", consume: async () => Promise.reject(new Error("down")) };
    const failures: string[] = [];
    const limiter = new RateLimiter(broken, policies, SECRET, Date.now, (policy) => failures.push(policy.name));
    const closed = await limiter.consume("signInUsername", ["alice", "1.2.3.4"]);
    expect(closed).toMatchObject({ allowed: false, storeFailed: true, retryAfterMs: 5_000 });
    const open = await limiter.consume("altchaChallenge", ["1.2.3.4"]);
    expect(open).toMatchObject({ allowed: true, storeFailed: true });
    expect(failures).toEqual(["signInUsername", "altchaChallenge"]);
  });
});

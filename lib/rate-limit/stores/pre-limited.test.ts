import { describe, expect, it } from "vitest";
import { RateLimiter } from "@/lib/rate-limit/limiter";
import { parseLimitSpec, type Policies, type Policy } from "@/lib/rate-limit/policies";
import type { RateLimitStore } from "@/lib/rate-limit/store";
import { MemoryRateLimitStore } from "./memory";
import { preLimited } from "@/lib/rate-limit/store";

const tokenBucket = (name: string, spec: string): Policy => ({
  name,
  algorithm: { kind: "token-bucket", bandwidths: parseLimitSpec(spec) },
  failMode: "closed",
  description: name,
});

function sharedStore(behaviour: "up" | "down") {
  const calls = { count: 0 };
  const inner = new MemoryRateLimitStore({ clock: () => 1_000 });
  const store: RateLimitStore = {
    kind: "redis",
    async consume(key, policy, nowMs) {
      calls.count += 1;
      if (behaviour === "down") throw new Error("connection refused");
      return inner.consume(key, policy, nowMs);
    },
  };
  return { store, calls };
}

describe("preLimited (a per-instance store in front of the shared one)", () => {
  it("answers the flood's refusals itself: the shared store sees only what the local count allows", async () => {
    const shared = sharedStore("up");
    const store = preLimited(new MemoryRateLimitStore({ clock: () => 1_000 }), shared.store);
    const policy = tokenBucket("challenge", "10/1m");
    const decisions = await Promise.all(Array.from({ length: 200 }, () => store.consume("k", policy, 1_000)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    expect(shared.calls.count).toBe(10);
    expect(store.kind).toBe("redis");
  });

  it("keeps the shared store the authority: what it refuses stays refused", async () => {
    const shared = sharedStore("up");
    const policy = tokenBucket("signIn", "5/15m");
    // Another instance spent the shared allowance.
    for (let i = 0; i < 5; i++) await shared.store.consume("k", policy, 1_000);
    const store = preLimited(new MemoryRateLimitStore({ clock: () => 1_000 }), shared.store);
    expect(await store.consume("k", policy, 1_000)).toMatchObject({ allowed: false });
  });

  it("holds a fail-open policy to one instance's limit while the shared store is down", async () => {
    const shared = sharedStore("down");
    const policy: Policy = { ...tokenBucket("altchaChallenge", "10/1m"), failMode: "open" };
    const limiter = new RateLimiter(
      preLimited(new MemoryRateLimitStore({ clock: () => 1_000 }), shared.store),
      { altchaChallenge: policy } as unknown as Policies,
      "k".repeat(32),
      () => 1_000,
    );
    const outcomes = await Promise.all(Array.from({ length: 50 }, () => limiter.consume("altchaChallenge", ["203.0.113.7"])));
    expect(outcomes.filter((o) => o.allowed)).toHaveLength(10);
    expect(outcomes.filter((o) => o.allowed).every((o) => o.storeFailed)).toBe(true);
    expect(outcomes.filter((o) => !o.allowed).every((o) => !o.storeFailed)).toBe(true);
  });
});

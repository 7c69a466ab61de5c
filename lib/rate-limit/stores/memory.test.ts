import { describe, expect, it } from "vitest";
import { DECISION_CASES, runDecisionCase } from "@/tests/fixtures/decision-cases";
import { defaultPolicies, parseLimitSpec, type Policy } from "@/lib/rate-limit/policies";
import { bandwidthsNeeded, MemoryRateLimitStore } from "@/lib/rate-limit/stores/memory";

const T0_MS = 1_700_000_000_000;

function policy(name: string, spec: string): Policy {
  return { name, algorithm: { kind: "token-bucket", bandwidths: parseLimitSpec(spec) }, failMode: "closed", description: name };
}

/** A store on a fake clock that the test moves by hand. */
function storeWithFakeClock(startMs: number, maxEntries?: number) {
  const clock = { nowMs: startMs };
  const store = new MemoryRateLimitStore({ maxEntries, clock: () => clock.nowMs });
  return { store, clock, consume: (key: string, p: Policy) => store.consume(key, p, clock.nowMs) };
}

const fivePer15m = policy("fivePer15m", "5/15m");

describe("MemoryRateLimitStore", () => {
  it("is a memory store returning decisions without the internal state", async () => {
    const { store, consume } = storeWithFakeClock(T0_MS);
    expect(store.kind).toBe("memory");
    expect(await consume("alice", fivePer15m)).toEqual({ allowed: true, remaining: 4, retryAfterMs: 0, resetAfterMs: 180_000 });
  });

  it("keeps state between calls and refuses once the bucket is empty", async () => {
    const { consume } = storeWithFakeClock(T0_MS);
    const decisions = [];
    for (let i = 0; i < 6; i++) decisions.push(await consume("alice", fivePer15m));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
    expect(decisions[5]).toMatchObject({ remaining: 0, retryAfterMs: 180_000 });
  });

  it("admits exactly the capacity to concurrent calls on one key", async () => {
    const { consume } = storeWithFakeClock(T0_MS);
    const decisions = await Promise.all(Array.from({ length: 20 }, () => consume("alice", fivePer15m)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(5);
  });

  it("keeps policies apart even when they share a key", async () => {
    const { consume } = storeWithFakeClock(T0_MS);
    for (let i = 0; i < 5; i++) await consume("203.0.113.7", fivePer15m);
    expect((await consume("203.0.113.7", fivePer15m)).allowed).toBe(false);
    expect(await consume("203.0.113.7", policy("other", "5/15m"))).toMatchObject({ allowed: true, remaining: 4 });
  });

  // Small start times too: lru-cache ignores a TTL whose start time is 0, which a fake clock can produce.
  it.each([0, 1, T0_MS])("forgets an idle key exactly at resetAfterMs and not before (clock starting at %i)", async (startMs) => {
    const { store, clock, consume } = storeWithFakeClock(startMs);
    await consume("alice", fivePer15m);
    const { resetAfterMs } = await consume("alice", fivePer15m);
    expect(resetAfterMs).toBe(360_000);

    clock.nowMs = startMs + resetAfterMs - 1;
    expect(store.has("fivePer15m", "alice")).toBe(true);
    clock.nowMs = startMs + resetAfterMs;
    expect(store.has("fivePer15m", "alice")).toBe(false);
    // Forgetting then changed nothing: the bucket was full again, as for a fresh key.
    expect(await consume("alice", fivePer15m)).toEqual(await consume("bob", fivePer15m));
  });

  it("renews the expiry on every write, so an active key is never reset", async () => {
    const { store, clock, consume } = storeWithFakeClock(T0_MS);
    let admitted = 0;
    // An abuser trying once a second for 30 minutes: 5 at first, then one per 3 minutes of refill.
    for (let elapsedMs = 0; elapsedMs <= 30 * 60_000; elapsedMs += 1_000) {
      clock.nowMs = T0_MS + elapsedMs;
      if ((await consume("mallory", fivePer15m)).allowed) admitted += 1;
      expect(store.has("fivePer15m", "mallory")).toBe(true);
    }
    // A fixed 15-minute expiry from the first write would have handed out 5 fresh tokens mid-attack.
    expect(admitted).toBe(5 + 10);
  });

  it("stays bounded by maxEntries, evicting the least recently used key", async () => {
    const { store, consume } = storeWithFakeClock(T0_MS, 3);
    await consume("a", fivePer15m);
    await consume("b", fivePer15m);
    await consume("b", fivePer15m);
    await consume("c", fivePer15m);
    await consume("a", fivePer15m);
    await consume("d", fivePer15m);

    expect(store.size).toBe(3);
    expect(["a", "b", "c", "d"].map((key) => store.has("fivePer15m", key))).toEqual([true, false, true, true]);
    // b's two earlier requests are gone with its entry.
    expect((await consume("b", fivePer15m)).remaining).toBe(4);
  });

  it("gives a freed slot to a new key without its state, after eviction and after expiry", async () => {
    const { store, clock, consume } = storeWithFakeClock(T0_MS, 2);
    for (let i = 0; i < 5; i++) await consume("a", fivePer15m);
    await consume("b", fivePer15m);
    // c pushes out a (the least recently used) and takes its slot: it starts full, a's count is not its own.
    expect(await consume("c", fivePer15m)).toMatchObject({ allowed: true, remaining: 4 });
    expect((await consume("b", fivePer15m)).remaining).toBe(3);

    // b and c expire; new keys take their slots and start full, while an old key that comes back is fresh too.
    clock.nowMs = T0_MS + 15 * 60_000;
    expect(await consume("d", fivePer15m)).toMatchObject({ allowed: true, remaining: 4 });
    expect(await consume("b", fivePer15m)).toMatchObject({ allowed: true, remaining: 4 });
    expect(store.size).toBe(2);
  });

  it("keeps every key's state apart while many keys come and go through few slots", async () => {
    const { consume } = storeWithFakeClock(T0_MS, 50);
    const twoPerMinute: Policy = { ...fivePer15m, name: "window", algorithm: { kind: "sliding-window", limit: 2, windowMs: 60_000 } };
    for (let round = 0; round < 3; round++) {
      for (let key = 0; key < 40; key++) {
        // Each key is consumed (key % 6) times, on both kinds of state: its remaining count tells if another key's leaked in.
        for (let n = 1; n <= key % 6; n++) {
          const bucket = await consume(`k${round}-${key}`, fivePer15m);
          expect(bucket.remaining).toBe(Math.max(0, 5 - n));
          const window = await consume(`k${round}-${key}`, twoPerMinute);
          expect(window.allowed).toBe(n <= 2);
        }
      }
    }
  });

  it("refuses a policy with more bandwidths than it was made for, and holds no slot for it", async () => {
    const store = new MemoryRateLimitStore({ maxEntries: 1, maxBandwidths: 1, clock: () => T0_MS });
    await expect(store.consume("k", policy("two", "5/15m,2/10s"), T0_MS)).rejects.toThrow(/holds 1 bandwidths per key; a policy has 2/);
    expect(store.size).toBe(0);
    // The one slot (and the spare) still serve: two keys in turn through a store of one.
    expect(await store.consume("a", fivePer15m, T0_MS)).toMatchObject({ allowed: true, remaining: 4 });
    expect(await store.consume("b", fivePer15m, T0_MS)).toMatchObject({ allowed: true, remaining: 4 });
    expect(await store.consume("a", fivePer15m, T0_MS)).toMatchObject({ allowed: true, remaining: 4 });
  });

  it("numbers up to 64 policies apart and refuses a 65th rather than let two share their keys", async () => {
    const { consume } = storeWithFakeClock(T0_MS);
    for (let i = 0; i < 64; i++) expect((await consume("k", policy(`p${i}`, "1/1m"))).allowed).toBe(true);
    // Each policy's one token is spent, key for key, and no other policy's count touched it.
    for (let i = 0; i < 64; i++) expect((await consume("k", policy(`p${i}`, "1/1m"))).allowed).toBe(false);
    await expect(consume("k", policy("p64", "1/1m"))).rejects.toThrow(/at most 64 policies/);
  });

  it("is made for the policies' widest token bucket", () => {
    expect(bandwidthsNeeded(defaultPolicies)).toBeGreaterThanOrEqual(1);
    expect(bandwidthsNeeded({ ...defaultPolicies, signInUsername: policy("signInUsername", "5/15m,2/10s,1/1s") })).toBe(3);
  });

  it("uses the sliding window when the policy asks for it", async () => {
    const { consume } = storeWithFakeClock(T0_MS);
    const twoPerMinute: Policy = { ...fivePer15m, name: "window", algorithm: { kind: "sliding-window", limit: 2, windowMs: 60_000 } };
    const decisions = [await consume("k", twoPerMinute), await consume("k", twoPerMinute), await consume("k", twoPerMinute)];
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, false]);
  });

  it("works with the default policies", async () => {
    const { consume } = storeWithFakeClock(T0_MS);
    const decisions = [];
    for (let i = 0; i < 11; i++) decisions.push(await consume("203.0.113.7", defaultPolicies.altchaChallengeDevice));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    expect(decisions[10]!.retryAfterMs).toBe(1_000);
  });

  it("refuses a maxEntries that is not a whole number >= 1", () => {
    expect(() => new MemoryRateLimitStore({ maxEntries: 0 })).toThrow(/maxEntries/);
    expect(() => new MemoryRateLimitStore({ maxEntries: 2.5 })).toThrow(/maxEntries/);
  });

  it("refuses a policy name containing the key separator", async () => {
    const { consume } = storeWithFakeClock(T0_MS);
    await expect(consume("k", policy("a:b", "1/1s"))).rejects.toThrow(/must not contain ":"/);
  });
});

describe("MemoryRateLimitStore idle TTL", () => {
  it("keeps a sliding-window counter for 10 windows after its last access, not after its first write", async () => {
    let now = 1_000_000;
    const store = new MemoryRateLimitStore({ clock: () => now });
    const policy = { ...defaultPolicies.apiToken, idleTtlMs: 600_000 };
    await store.consume("client", policy, now);
    now += 500_000;
    await store.consume("client", policy, now); // renews the 10 minutes
    now += 599_999;
    expect(store.has(policy.name, "client")).toBe(true);
    now += 1;
    expect(store.has(policy.name, "client")).toBe(false);
  });
});

describe("MemoryRateLimitStore against the shared decision table", () => {
  for (const [i, decisionCase] of DECISION_CASES.entries()) {
    it(decisionCase.name, async () => {
      let now = 0;
      const store = new MemoryRateLimitStore({ clock: () => now });
      const policy = { name: `case${i}`, algorithm: decisionCase.algorithm, failMode: "closed" as const, description: decisionCase.name };
      const { actual, expected } = await runDecisionCase(decisionCase, (nowMs, cost) => store.consume("k", policy, (now = nowMs), cost));
      expect(actual).toEqual(expected);
    });
  }
});

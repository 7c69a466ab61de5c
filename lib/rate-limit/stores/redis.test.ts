import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisUrl, testKeyPrefix } from "@/tests/helpers/redis";
import { consumeTokenBucket, consumeSlidingWindow } from "../algorithms";
import { DECISION_CASES, runDecisionCase } from "@/tests/fixtures/decision-cases";
import { policiesFromSpecs, type Policy } from "../policies";
import type { RateLimitStore } from "../store";
import { connectRedis, RedisRateLimitStore, untilReady } from "./redis";

const url = redisUrl();

const tokenBucket = (name: string, spec: string): Policy => ({ ...policiesFromSpecs({ signInUsername: spec }).signInUsername, name });
const slidingWindow = (name: string, limit: number, windowMs: number): Policy => ({
  name,
  algorithm: { kind: "sliding-window", limit, windowMs },
  failMode: "closed",
  description: "test",
});

describe.skipIf(!url)("RedisRateLimitStore (real Redis)", () => {
  const prefix = testKeyPrefix();
  let a: Redis;
  let b: Redis;
  let storeA: RateLimitStore;
  let storeB: RateLimitStore;

  beforeAll(async () => {
    a = connectRedis(url!);
    b = connectRedis(url!);
    expect(await untilReady(a, 5_000)).toBe(true);
    expect(await untilReady(b, 5_000)).toBe(true);
    storeA = new RedisRateLimitStore(a, { keyPrefix: prefix });
    storeB = new RedisRateLimitStore(b, { keyPrefix: prefix });
  });

  afterAll(async () => {
    const keys = await a.keys(`${prefix}*`);
    if (keys.length > 0) await a.del(...keys);
    await a.quit();
    await b.quit();
  });

  it("makes the same token-bucket decisions as the TypeScript reference", async () => {
    const policy = tokenBucket("tb1", "5/15m,2/10s");
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push(await storeA.consume("k", policy, Date.now()));
    // The reference at one instant (Redis's clock moves a few ms between calls).
    let state;
    const reference = [];
    for (let i = 0; i < 3; i++) {
      const d = consumeTokenBucket(state, 1_000_000, policy.algorithm as never);
      state = d.nextState;
      reference.push(d);
    }
    expect(outcomes.map((o) => o.allowed)).toEqual(reference.map((r) => r.allowed));
    expect(outcomes.map((o) => o.remaining)).toEqual(reference.map((r) => r.remaining));
    expect(Math.abs(outcomes[2]!.retryAfterMs - reference[2]!.retryAfterMs)).toBeLessThan(50);
    expect(Math.abs(outcomes[2]!.resetAfterMs - reference[2]!.resetAfterMs)).toBeLessThan(50);
  });

  it("refuses the 6th of 5 per 15 minutes with Retry-After ≈ 3 minutes, per key", async () => {
    const policy = tokenBucket("tb2", "5/15m");
    const allowed = [];
    for (let i = 0; i < 6; i++) allowed.push((await storeA.consume("alice", policy, Date.now())).allowed);
    expect(allowed).toEqual([true, true, true, true, true, false]);
    const sixth = await storeA.consume("alice", policy, Date.now());
    expect(sixth.retryAfterMs).toBeGreaterThan(179_000);
    expect(sixth.retryAfterMs).toBeLessThanOrEqual(180_000);
    expect((await storeA.consume("bob", policy, Date.now())).allowed).toBe(true);
  });

  it("expires the key exactly when the bucket would be full again (PEXPIRE)", async () => {
    const policy = tokenBucket("tb3", "5/15m");
    const decision = await storeA.consume("ttl", policy, Date.now());
    const ttlMs = await a.pttl(`${prefix}tb3:ttl`);
    expect(decision.resetAfterMs).toBe(180_000);
    expect(ttlMs).toBeGreaterThan(179_000);
    expect(ttlMs).toBeLessThanOrEqual(180_000);
  });

  it("keeps keys under the configured prefix only", async () => {
    await storeA.consume("prefixed", tokenBucket("tb4", "5/15m"), Date.now());
    expect(await a.exists(`${prefix}tb4:prefixed`)).toBe(1);
    expect(await a.exists("tb4:prefixed")).toBe(0);
  });

  it("makes the same sliding-window decisions as the TypeScript reference", async () => {
    const policy = slidingWindow("sw1", 3, 60_000);
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await storeA.consume("k", policy, Date.now()));
    expect(outcomes.map((o) => o.allowed)).toEqual([true, true, true, false]);
    const serverNowMs = Number((await a.time())[0]) * 1000;
    const windowEndMs = (Math.floor(serverNowMs / 60_000) + 1) * 60_000;
    // Refused in the first window: allowed again once the previous window's weight decays.
    let state;
    for (let i = 0; i < 3; i++) state = consumeSlidingWindow(state, serverNowMs, policy.algorithm as never).nextState;
    const reference = consumeSlidingWindow(state, serverNowMs, policy.algorithm as never);
    expect(Math.abs(outcomes[3]!.retryAfterMs - reference.retryAfterMs)).toBeLessThan(1_100);
    expect(outcomes[3]!.resetAfterMs).toBeLessThanOrEqual(windowEndMs + 60_000 - serverNowMs + 1_000);
  });

  it("never admits more than the limit: 200 concurrent consumes on one key from two connections", async () => {
    const policy = tokenBucket("tb5", "20/15m");
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? storeA : storeB).consume("hot", policy, Date.now())));
    expect(results.filter((r) => r.allowed).length).toBe(20);
  });

  it("ignores the caller's clock: an instance 30 s ahead decides the same", async () => {
    const policy = tokenBucket("tb6", "2/10s");
    const now = Date.now();
    const left = [
      await storeA.consume("skew", policy, now),
      await storeB.consume("skew", policy, now + 30_000),
      await storeB.consume("skew", policy, now + 30_000),
    ];
    expect(left.map((d) => d.allowed)).toEqual([true, true, false]);
    // A store that trusted the caller's clock would have refilled the bucket 30 s early.
    expect(left[2]!.retryAfterMs).toBeGreaterThan(4_000);
  });

  it("costs one round trip per check (counted by Redis)", async () => {
    const policy = tokenBucket("tb7", "5/15m");
    await storeA.consume("warm", policy, Date.now()); // loads the script once
    // Commands run inside a script are counted too (TIME, GET, SET), so count what clients sent.
    const scriptCalls = async () => {
      const stats = await a.info("commandstats");
      const calls = (name: string) => Number(new RegExp(`cmdstat_${name}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
      return { evalsha: calls("evalsha"), eval: calls("eval") };
    };
    const before = await scriptCalls();
    for (let i = 0; i < 20; i++) await storeA.consume(`rt${i}`, policy, Date.now());
    const after = await scriptCalls();
    expect(after.evalsha - before.evalsha).toBe(20);
    expect(after.eval - before.eval).toBe(0);
  });
});

describe.skipIf(!url)("the Lua script against the shared decision table (real Redis)", () => {
  const prefix = testKeyPrefix();
  let redis: Redis;
  let store: RateLimitStore;

  beforeAll(async () => {
    redis = connectRedis(url!);
    expect(await untilReady(redis, 5_000)).toBe(true);
    // The production script with its TIME line swapped for the caller's time, so each row's instant is exact.
    store = new RedisRateLimitStore(redis, { keyPrefix: prefix, clock: "caller" });
  });

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  for (const [i, decisionCase] of DECISION_CASES.entries()) {
    it(decisionCase.name, async () => {
      const policy: Policy = { name: `case${i}`, algorithm: decisionCase.algorithm, failMode: "closed", description: decisionCase.name };
      const { actual, expected } = await runDecisionCase(decisionCase, (nowMs, cost) => store.consume("k", policy, nowMs, cost));
      expect(actual).toEqual(expected);
    });
  }
});

describe.skipIf(!url)("RedisRateLimitStore idle TTL (real Redis)", () => {
  it("keeps a sliding-window key for the policy's idle TTL, renewed on access", async () => {
    const redis = connectRedis(url!);
    await untilReady(redis, 5_000);
    const prefix = testKeyPrefix();
    const store = new RedisRateLimitStore(redis, { keyPrefix: prefix });
    const policy: Policy = {
      name: "sw9",
      algorithm: { kind: "sliding-window", limit: 10, windowMs: 60_000 },
      failMode: "closed",
      description: "t",
      idleTtlMs: 600_000,
    };
    await store.consume("idle", policy, Date.now());
    const ttlMs = await redis.pttl(`${prefix}sw9:idle`);
    expect(ttlMs).toBeGreaterThan(599_000);
    expect(ttlMs).toBeLessThanOrEqual(600_000);
    await redis.del(`${prefix}sw9:idle`);
    await redis.quit();
  });
});

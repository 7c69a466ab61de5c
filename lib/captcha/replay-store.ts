import { LRUCache } from "lru-cache";
import type { Redis } from "ioredis";

/** Remembers spent ALTCHA challenges until they expire. */
export interface ReplayStore {
  readonly kind: "memory" | "redis" | "postgres";
  /** Atomic check-and-set: true the first time an id is claimed, false for a replay. */
  claim(id: string, expiresAtMs: number, nowMs: number): Promise<boolean>;
}

/**
 * In-process replay store. Entries live exactly as long as their challenge; the bound keeps a
 * flood of solved challenges from growing memory without limit (past it, the oldest spent
 * challenges are forgotten first, and those are the closest to expiring anyway).
 */
export function memoryReplayStore(maxEntries = 100_000, clock: () => number = Date.now): ReplayStore {
  // Expiry measured on the same clock as the `nowMs` callers pass in (a fake one in tests).
  const spent = new LRUCache<string, true>({ max: maxEntries, ttlResolution: 0, perf: { now: clock } });
  return {
    kind: "memory",
    async claim(id, expiresAtMs, nowMs) {
      if (spent.has(id)) return false;
      const ttlMs = expiresAtMs - nowMs;
      if (ttlMs <= 0) return false;
      spent.set(id, true, { ttl: ttlMs, start: nowMs });
      return true;
    },
  };
}

/** Spent challenges in Redis: SET NX PX is the atomic check-and-set, expiring with the challenge. */
export function redisReplayStore(redis: Redis, keyPrefix: string): ReplayStore {
  return {
    kind: "redis",
    async claim(id, expiresAtMs, nowMs) {
      const ttlMs = Math.ceil(expiresAtMs - nowMs);
      if (ttlMs <= 0) return false;
      return (await redis.set(`${keyPrefix}altcha:${id}`, "1", "PX", ttlMs, "NX")) === "OK";
    },
  };
}

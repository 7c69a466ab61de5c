import type { Redis } from "ioredis";
import type { ReplayStore } from "./replay-store";

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

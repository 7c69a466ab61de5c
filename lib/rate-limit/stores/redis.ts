import { Redis } from "ioredis";
import type { Policy } from "../policies";
import type { Cost } from "../algorithms";
import { scopedKey, type Decision, type RateLimitStore } from "../store";
import { CONSUME_SCRIPT, CONSUME_SCRIPT_AT_CALLER_TIME } from "./redis.lua";

export type RedisStoreOptions = {
  /** Prepended to every key, so several apps (or test runs) can share one Redis. */
  keyPrefix: string;
  /**
   * "server" (always, in the app): decisions use Redis's TIME, the one clock every instance shares.
   * "caller": they use the `nowMs` passed in, so tests can run the shared decision table.
   */
  clock?: "server" | "caller";
};

type RedisWithConsume = Redis & {
  gatehouseConsume(key: string, ...args: (string | number)[]): Promise<[number, number, number, number]>;
  gatehouseConsumeAt(key: string, ...args: (string | number)[]): Promise<[number, number, number, number]>;
};

function scriptArgs(policy: Policy, cost: Cost): (string | number)[] {
  const { algorithm } = policy;
  const idleTtlMs = policy.idleTtlMs ?? 0;
  if (algorithm.kind === "token-bucket") {
    return ["tb", idleTtlMs, cost, algorithm.bandwidths.length, ...algorithm.bandwidths.flatMap((b) => [b.capacity, b.periodMs])];
  }
  return ["sw", idleTtlMs, cost, algorithm.limit, algorithm.windowMs];
}

/**
 * Limiter state in Redis. One EVALSHA per check (ioredis falls back to EVAL once if the
 * script is not cached yet). `nowMs` is ignored on purpose: the script reads Redis's TIME.
 */
export class RedisRateLimitStore implements RateLimitStore {
  readonly kind = "redis" as const;
  private readonly redis: RedisWithConsume;

  constructor(
    redis: Redis,
    private readonly options: RedisStoreOptions,
  ) {
    const lua = options.clock === "caller" ? CONSUME_SCRIPT_AT_CALLER_TIME : CONSUME_SCRIPT;
    // One command name per script: ioredis caches a command's script by name on the connection.
    redis.defineCommand(options.clock === "caller" ? "gatehouseConsumeAt" : "gatehouseConsume", { numberOfKeys: 1, lua });
    this.redis = redis as RedisWithConsume;
  }

  // The contract's nowMs is not taken (unless clock is "caller"): the script reads the Redis server's clock.
  async consume(key: string, policy: Policy, nowMs: number, cost: Cost = 1): Promise<Decision> {
    const storageKey = this.options.keyPrefix + scopedKey(policy.name, key);
    const [allowed, remaining, retryAfterMs, resetAfterMs] =
      this.options.clock === "caller"
        ? await this.redis.gatehouseConsumeAt(storageKey, ...scriptArgs(policy, cost), nowMs)
        : await this.redis.gatehouseConsume(storageKey, ...scriptArgs(policy, cost));
    return { allowed: allowed === 1, remaining, retryAfterMs, resetAfterMs };
  }
}

/**
 * A Redis connection that fails fast: no offline queue (a command while disconnected errors at
 * once instead of waiting) and one retry per command; reconnects keep going in the background,
 * so the store recovers after an outage without a restart.
 */
export function connectRedis(url: string, onError: (error: Error) => void = () => {}): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  // Connection errors also surface through the commands (and the breaker); never crash on the event.
  redis.on("error", onError);
  return redis;
}

/** Resolves when connected, or after `timeoutMs` regardless: a Redis that is down must not stop the start. */
export function untilReady(redis: Redis, timeoutMs: number): Promise<boolean> {
  if (redis.status === "ready") return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      redis.off("ready", onReady);
      resolve(false);
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve(true);
    };
    redis.once("ready", onReady);
  });
}

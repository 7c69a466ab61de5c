import { LRUCache } from "lru-cache";
import type { AppConfig } from "@/lib/config/env";
import { postgresReplayStore } from "@/lib/captcha/postgres-replay-store";
import { memoryReplayStore, redisReplayStore, type ReplayStore } from "@/lib/captcha/replay-store";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import type { Logger } from "@/lib/log/logger";
import type { Metrics } from "@/lib/log/metrics";
import { throttled } from "@/lib/log/throttled";
import { RateLimiter } from "@/lib/rate-limit/limiter";
import { preLimited, type Decision, type RateLimitStore, type RateLimitStoreKind } from "@/lib/rate-limit/store";
import { createStoreGuard, guardReplayStore, type StoreGuard, type StoreHealth } from "@/lib/rate-limit/store-guard";
import { bandwidthsNeeded, MemoryRateLimitStore } from "@/lib/rate-limit/stores/memory";
import { createPostgresRateLimitStore } from "@/lib/rate-limit/stores/postgres";
import { connectRedis, RedisRateLimitStore, untilReady } from "@/lib/rate-limit/stores/redis";

type Settings = AppConfig["rateLimit"];
type Deps = { prisma: PrismaClient; clock: () => number; metrics: Metrics; log: Logger };

/** The limits room of a Gatehouse: the limiter, the ALTCHA replay store and the per-address failure counts. */
export type LimitsRoom = {
  limiter: RateLimiter;
  /** The limiter's backend and whether it answers (always "up" in memory). */
  storeHealth(): { kind: RateLimitStoreKind; state: StoreHealth };
  replays: ReplayStore;
  /** Failed password checks per client address key in the last 15 minutes (the challenge size). */
  addressFailures: LRUCache<string, number>;
};

/** The room, and what only the root needs of it: the circuits for the gauges, and its close. */
export type BuiltLimits = {
  room: LimitsRoom;
  circuits(): { name: string; state: StoreHealth }[];
  close(): Promise<void>;
};

export async function buildLimits(settings: Settings, deps: Deps): Promise<BuiltLimits> {
  const backend = await openBackend(settings, deps);
  const failureLogs = new Map<string, (error: unknown) => void>();
  const limiter = new RateLimiter(
    backend.store,
    settings.policies,
    settings.keySecret,
    deps.clock,
    (policy, error) => {
      // Protection is weakened (fail open) or traffic refused (fail closed): error, once per 10 s per policy.
      let report = failureLogs.get(policy.name);
      if (!report) {
        report = throttled(10_000, (err: unknown) =>
          deps.log.error({ event: "rate_limit_store_failed", policy: policy.name, failMode: policy.failMode, err: String(err) }),
        );
        failureLogs.set(policy.name, report);
      }
      report(error);
    },
    settings.trustedNetworkAllowance,
  );
  return {
    room: {
      limiter,
      storeHealth: () => ({ kind: backend.store.kind, state: backend.health() }),
      replays: backend.replays,
      // noUpdateTTL: an address's count lapses 15 minutes after its first failure, not after its last,
      // so ongoing typos behind a shared address do not keep everyone there at the top level.
      addressFailures: new LRUCache<string, number>({ max: settings.memoryMaxEntries, ttl: 15 * 60_000, noUpdateTTL: true }),
    },
    circuits: backend.circuits,
    close: backend.close,
  };
}

type Backend = {
  store: RateLimitStore;
  replays: ReplayStore;
  health(): StoreHealth;
  /** Each shared-store circuit and its state (none in memory). */
  circuits(): { name: string; state: StoreHealth }[];
  close(): Promise<void>;
};

/**
 * The limiter and replay stores. Memory: per instance, nothing to fail. Redis or PostgreSQL:
 * shared by every instance, behind a per-instance memory store with the same policies (which
 * refuses a flood before it reaches the shared store), each call behind its own policy's guard
 * (timeout + circuit breaker; the replay store has one of its own): one client's flood of one
 * endpoint cannot open the circuit that sign-in depends on.
 */
async function openBackend(settings: Settings, deps: Deps): Promise<Backend> {
  const local = () =>
    new MemoryRateLimitStore({
      maxEntries: settings.memoryMaxEntries,
      maxBandwidths: bandwidthsNeeded(settings.policies),
      clock: deps.clock,
    });
  if (settings.store === "memory") {
    return {
      store: local(),
      replays: memoryReplayStore(settings.memoryMaxEntries, deps.clock),
      health: () => "up",
      circuits: () => [],
      close: async () => {},
    };
  }
  const guards = guardsOf(settings, deps.log);
  const shared = settings.store === "redis" ? await redisBackend(settings, deps, guards) : postgresBackend(settings, deps, guards);
  return {
    store: preLimited(local(), shared.store),
    circuits: guards.circuits,
    replays: guardReplayStore(shared.replays, guards.guardFor("altcha-replays")),
    health: shared.health,
    close: shared.close,
  };
}

type Guards = {
  guardFor(name: string): StoreGuard;
  circuits(): { name: string; state: StoreHealth }[];
  /** The worst circuit is the store's health: "down" as soon as any policy's circuit is open. */
  health(): StoreHealth;
  /** The store-call histogram times what the guard times: the store's own answer. */
  timed(metrics: Metrics, kind: RateLimitStore["kind"], call: () => Promise<Decision>): () => Promise<Decision>;
};

type SharedBackend = Pick<Backend, "replays" | "health" | "close"> & { store: RateLimitStore };

/**
 * Every call through its policy's guard (timeout + circuit breaker): one flooded policy that
 * times out opens its own circuit, never the one that guards sign-in.
 */
function guardsOf(settings: Settings, log: Logger): Guards {
  const guards = new Map<string, StoreGuard>();
  const guardFor = (name: string) => {
    let guard = guards.get(name);
    if (!guard) {
      guard = createStoreGuard({
        timeoutMs: settings.storeTimeoutMs,
        breakerFailures: settings.breakerFailures,
        halfOpenAfterMs: settings.breakerHalfOpenMs,
        onOpen: () =>
          log.error({
            event: "rate_limit_breaker_open",
            store: settings.store,
            circuit: name,
            effect: "this policy's outage rule applies",
          }),
        onClose: () => log.info({ event: "rate_limit_breaker_closed", store: settings.store, circuit: name }),
      });
      guards.set(name, guard);
    }
    return guard;
  };
  const circuits = () => [...guards].map(([name, guard]) => ({ name, state: guard.health() }));
  return {
    guardFor,
    circuits,
    health: () => {
      const states = circuits().map((circuit) => circuit.state);
      return states.includes("down") ? "down" : states.includes("recovering") ? "recovering" : "up";
    },
    timed: (metrics, kind, call) => async () => {
      const end = metrics.storeCallSeconds.startTimer({ store: kind });
      try {
        return await call();
      } finally {
        end();
      }
    },
  };
}

async function redisBackend(settings: Settings, deps: Deps, guards: Guards): Promise<SharedBackend> {
  const redis = connectRedis(
    settings.redisUrl,
    throttled(10_000, (error) => deps.log.warn({ event: "redis_connection_error", err: error.message })),
  );
  // Waits briefly for the first connection; a Redis that is down does not stop the start.
  if (!(await untilReady(redis, 2_000))) deps.log.error({ event: "rate_limit_store_unreachable", store: "redis" });
  const store = new RedisRateLimitStore(redis, { keyPrefix: settings.keyPrefix });
  return {
    store: {
      kind: store.kind,
      consume: (key, policy, nowMs, cost) =>
        guards.guardFor(policy.name).execute(guards.timed(deps.metrics, store.kind, () => store.consume(key, policy, nowMs, cost))),
    },
    replays: redisReplayStore(redis, settings.keyPrefix),
    // Disconnected counts as down before the breaker has seen enough failures to open.
    health: () => (redis.status === "ready" ? guards.health() : "down"),
    close: async () => void (await redis.quit().catch(() => redis.disconnect())),
  };
}

function postgresBackend(settings: Settings, deps: Deps, guards: Guards): SharedBackend {
  // Each store deletes its own expired rows on a timer of its own. The guard goes inside the
  // store's per-key queue, so its timeout bounds the database's answer, not the wait in line.
  const postgres = createPostgresRateLimitStore(deps.prisma, {
    onCleanupError: (error) => deps.log.warn({ event: "rate_limit_cleanup_failed", err: String(error) }),
    guardEach: (policy, work) =>
      guards.guardFor(policy.name).execute((signal) => guards.timed(deps.metrics, "postgres", () => work(signal))()),
    maxQueueWaitMs: settings.storeTimeoutMs,
  });
  const replays = postgresReplayStore(deps.prisma, {
    onCleanupError: (error) => deps.log.warn({ event: "altcha_replay_cleanup_failed", err: String(error) }),
  });
  return {
    store: postgres,
    replays,
    health: guards.health,
    close: async () => {
      await Promise.all([postgres.close(), replays.close()]);
    },
  };
}

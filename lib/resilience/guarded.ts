import type { ReplayStore } from "@/lib/captcha/replay-store";
import type { RateLimitStore } from "@/lib/rate-limit/store";
import type { StoreGuard } from "./store-guard";

/** The same store, every call through the guard (timeout + circuit breaker). */
export function guardRateLimitStore(store: RateLimitStore, guard: StoreGuard): RateLimitStore {
  return { kind: store.kind, consume: (key, policy, nowMs) => guard.execute(() => store.consume(key, policy, nowMs)) };
}

export function guardReplayStore(store: ReplayStore, guard: StoreGuard): ReplayStore {
  return { kind: store.kind, claim: (id, expiresAtMs, nowMs) => guard.execute(() => store.claim(id, expiresAtMs, nowMs)) };
}

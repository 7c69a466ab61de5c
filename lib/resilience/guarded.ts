import type { ReplayStore } from "@/lib/captcha/replay-store";
import type { Policy } from "@/lib/rate-limit/policies";
import type { RateLimitStore } from "@/lib/rate-limit/store";
import type { StoreGuard } from "./store-guard";

/**
 * The same store, every call through its policy's guard (timeout + circuit breaker): one flooded
 * policy that times out opens its own circuit, never the one that guards sign-in.
 */
export function guardRateLimitStore(store: RateLimitStore, guardFor: (policy: Policy) => StoreGuard): RateLimitStore {
  return { kind: store.kind, consume: (key, policy, nowMs) => guardFor(policy).execute(() => store.consume(key, policy, nowMs)) };
}

export function guardReplayStore(store: ReplayStore, guard: StoreGuard): ReplayStore {
  return { kind: store.kind, claim: (id, expiresAtMs, nowMs) => guard.execute(() => store.claim(id, expiresAtMs, nowMs)) };
}

import type { Cost, Decision } from "@/lib/rate-limit/algorithms";
import type { Policy } from "@/lib/rate-limit/policies";

export type { Decision };

export type RateLimitStoreKind = "memory" | "redis" | "postgres";

/**
 * Persists limiter state. `consume` is one atomic read-decide-write per key: a `get` followed by a
 * `set` would let concurrent requests both see the last token. Each store keys state by
 * `scopedKey(policy.name, key)` and may forget a key after the decision's `resetAfterMs`.
 * `nowMs` must come from the same clock the store uses for expiry (whole ms since the epoch).
 * `cost` -1 gives back a token spent earlier (algorithms.ts), in the same one atomic step.
 */
export interface RateLimitStore {
  consume(key: string, policy: Policy, nowMs: number, cost?: Cost): Promise<Decision>;
  readonly kind: RateLimitStoreKind;
}

/**
 * How long a store keeps a key after this write: until its state would be fresh again, or the
 * policy's idle TTL if longer (both renewed on every access). Zero: forget it now.
 */
export function keepForMs(resetAfterMs: number, policy: Policy): number {
  return resetAfterMs > 0 ? Math.max(resetAfterMs, policy.idleTtlMs ?? 0) : 0;
}

/** Policy names may not contain ":", so the first ":" separates the two parts without ambiguity. */
export function scopedKey(policyName: string, key: string): string {
  if (policyName.includes(":")) throw new Error(`Rate limit policy name "${policyName}" must not contain ":"`);
  return `${policyName}:${key}`;
}

/**
 * A shared store behind a per-instance one with the same policies. This instance's own requests
 * are a subset of everybody's, so when the local count refuses, the shared count would refuse
 * too: the local refusal is answered at once and the shared store never sees the flood. Only
 * what the local store allows is asked of the shared one, which stays the authority. During an
 * outage of the shared store the local limit still holds, so a fail-open policy is open only up
 * to one instance's share of its limit, not without bound.
 */
export function preLimited(local: RateLimitStore, shared: RateLimitStore): RateLimitStore {
  return {
    kind: shared.kind,
    async consume(key, policy, nowMs, cost = 1) {
      const first = await local.consume(key, policy, nowMs, cost);
      // A refund is given back to both, as the request was counted by both.
      if (!first.allowed) return first;
      return shared.consume(key, policy, nowMs, cost);
    },
  };
}

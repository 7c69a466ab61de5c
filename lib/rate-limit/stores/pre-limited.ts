import type { RateLimitStore } from "@/lib/rate-limit/store";

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
    async consume(key, policy, nowMs) {
      const first = await local.consume(key, policy, nowMs);
      if (!first.allowed) return first;
      return shared.consume(key, policy, nowMs);
    },
  };
}

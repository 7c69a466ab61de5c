import type { Policy } from "@/lib/rate-limit/policies";

/**
 * The longest a token bucket stays empty after its last spend: one refill interval of its
 * slowest bandwidth. Whenever a link email is refused by its quota, the last one sent went out
 * within this time; if links live at least this long, the owner's mailbox always holds a live
 * link, whatever a stranger requested.
 */
export function longestEmptyMs(policy: Policy): number {
  if (policy.algorithm.kind !== "token-bucket") return policy.algorithm.windowMs;
  return Math.max(...policy.algorithm.bandwidths.map((bandwidth) => bandwidth.periodMs / bandwidth.capacity));
}

/** A configuration problem naming the variables, or null. */
export function linkOutlivesQuota(linkVariable: string, linkLifetimeMs: number, quotaVariable: string, quota: Policy): string | null {
  const emptyMs = longestEmptyMs(quota);
  if (linkLifetimeMs >= emptyMs) return null;
  return `Invalid configuration: ${linkVariable}: must be at least ${Math.ceil(emptyMs / 60_000)} minutes (one refill of ${quotaVariable}), so a stranger's requests can never leave the owner without a live link`;
}

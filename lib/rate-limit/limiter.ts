import { createHmac } from "node:crypto";
import type { Policies, Policy, PolicyName } from "./policies";
import type { Decision, RateLimitStore } from "./store";

export type LimitResult = Decision & {
  policy: Policy;
  /** The store did not answer and the policy's fail mode decided. */
  storeFailed: boolean;
};

// When a fail-closed policy cannot reach its store, the client is asked to come back after this.
const FAIL_CLOSED_RETRY_MS = 5_000;

/**
 * HMAC-SHA-256 of the key parts under a server secret. Parts are length-prefixed, so no value
 * a client controls (a username containing a separator, say) can forge another key, and no
 * username or address appears in a store key or a log line.
 */
export function digestKey(secret: string, parts: readonly string[]): string {
  const mac = createHmac("sha256", secret);
  for (const part of parts) mac.update(`${Buffer.byteLength(part)}:${part}`);
  return mac.digest("base64url");
}

export type StoreFailureHandler = (policy: Policy, error: unknown) => void;

/** Applies the policies table to a store: one atomic consume per check. */
export class RateLimiter {
  constructor(
    private readonly store: RateLimitStore,
    private readonly policies: Policies,
    private readonly keySecret: string,
    private readonly clock: () => number = Date.now,
    private readonly onStoreFailure: StoreFailureHandler = () => {},
  ) {}

  async consume(policyName: PolicyName, keyParts: readonly string[]): Promise<LimitResult> {
    const policy = this.policies[policyName];
    const key = digestKey(this.keySecret, keyParts);
    try {
      return { ...(await this.store.consume(key, policy, this.clock())), policy, storeFailed: false };
    } catch (error) {
      this.onStoreFailure(policy, error);
      const allowed = policy.failMode === "open";
      return { allowed, remaining: 0, retryAfterMs: allowed ? 0 : FAIL_CLOSED_RETRY_MS, resetAfterMs: 0, policy, storeFailed: true };
    }
  }
}

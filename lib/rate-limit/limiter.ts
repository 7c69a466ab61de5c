import { createHmac, createSecretKey, type KeyObject } from "node:crypto";
import type { Cost } from "./algorithms";
import { scaledPolicy, type Policies, type Policy, type PolicyName } from "./policies";
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
  const mac = createHmac("sha256", secretKey(secret));
  for (const part of parts) mac.update(`${Buffer.byteLength(part)}:${part}`);
  return mac.digest("base64url");
}

// A string secret is imported into a new key on every createHmac; a request digests several keys
// (each limit, the lockout, the log's), so each secret is imported once. An instance has one or two.
const importedSecrets = new Map<string, KeyObject>();
function secretKey(secret: string): KeyObject {
  let key = importedSecrets.get(secret);
  if (!key) {
    // Tests build many instances, each with its own secret: the map stays small.
    if (importedSecrets.size >= 8) importedSecrets.clear();
    key = createSecretKey(Buffer.from(secret, "utf8"));
    importedSecrets.set(secret, key);
  }
  return key;
}

export type StoreFailureHandler = (policy: Policy, error: unknown) => void;

/**
 * How one check is counted: `cost` -1 gives back a request counted earlier (a budget that counts
 * failures only, after a success); `trustedNetwork` applies the larger allowance of an address
 * in the operator's TRUSTED_NETWORKS (only ever asked for a limit keyed by the address).
 */
export type Consumption = { cost?: Cost; trustedNetwork?: boolean };

/** Applies the policies table to a store: one atomic consume per check. */
export class RateLimiter {
  private readonly trustedNetworkPolicies = new Map<PolicyName, Policy>();

  constructor(
    private readonly store: RateLimitStore,
    private readonly policies: Policies,
    private readonly keySecret: string,
    private readonly clock: () => number = Date.now,
    private readonly onStoreFailure: StoreFailureHandler = () => {},
    /** TRUSTED_NETWORK_ALLOWANCE: how many times an address limit an address in TRUSTED_NETWORKS gets. */
    private readonly trustedNetworkAllowance = 1,
  ) {}

  async consume(
    policyName: PolicyName,
    keyParts: readonly string[],
    { cost = 1, trustedNetwork = false }: Consumption = {},
  ): Promise<LimitResult> {
    const policy = trustedNetwork ? this.trustedNetworkPolicy(policyName) : this.policies[policyName];
    const key = digestKey(this.keySecret, keyParts);
    try {
      return { ...(await this.store.consume(key, policy, this.clock(), cost)), policy, storeFailed: false };
    } catch (error) {
      this.onStoreFailure(policy, error);
      const allowed = policy.failMode === "open";
      return { allowed, remaining: 0, retryAfterMs: allowed ? 0 : FAIL_CLOSED_RETRY_MS, resetAfterMs: 0, policy, storeFailed: true };
    }
  }

  /** The policy with its capacities multiplied: the same name (an address is always in or out), so the same state. */
  private trustedNetworkPolicy(name: PolicyName): Policy {
    let policy = this.trustedNetworkPolicies.get(name);
    if (!policy) {
      policy = scaledPolicy(this.policies[name], this.trustedNetworkAllowance);
      this.trustedNetworkPolicies.set(name, policy);
    }
    return policy;
  }
}

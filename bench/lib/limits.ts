import { defaultPolicies, formatLimitSpec, type PolicyName } from "@/lib/rate-limit/policies";

/** A shipped policy's limit as its spec ("30/15m"), for the bench's descriptions. */
export function defaultSpec(name: PolicyName): string {
  const { algorithm } = defaultPolicies[name];
  return algorithm.kind === "token-bucket"
    ? formatLimitSpec(algorithm.bandwidths)
    : formatLimitSpec([{ capacity: algorithm.limit, periodMs: algorithm.windowMs }]);
}

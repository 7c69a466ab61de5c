import type { AlgorithmPolicy, Bandwidth } from "@/lib/rate-limit/algorithms";

/**
 * Every limit Gatehouse applies, by name. A route asks for `signInUsername`; the 5-per-15-minutes
 * rule lives here, not in the handler.
 */

/** What to do when the store cannot answer: "closed" refuses the request, "open" lets it through. */
export type FailMode = "closed" | "open";

export type Policy = {
  /** Also scopes store keys, so two policies may limit the same key (e.g. an address) independently. */
  name: string;
  algorithm: AlgorithmPolicy;
  failMode: FailMode;
  description: string;
};

export type PolicyName = "signInUsername" | "signInAddress" | "register" | "altchaChallenge";

export type Policies = Readonly<Record<PolicyName, Policy>>;

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
type Unit = keyof typeof UNIT_MS;

const BANDWIDTH_PATTERN = /^(\d+)\s*\/\s*(\d+)\s*(ms|s|m|h|d)$/;
const SPEC_HELP = 'expected <count>/<amount><unit>[,...] with unit ms, s, m, h or d, e.g. "5/15m,2/10s"';

/** Parses a readable limit such as `5/15m,2/10s` (5 per 15 minutes and 2 per 10 seconds) into bandwidths. */
export function parseLimitSpec(spec: string): Bandwidth[] {
  if (spec.trim() === "") throw new Error(`Invalid rate limit spec "${spec}": it is empty; ${SPEC_HELP}`);
  return spec.split(",").map((rawPart) => {
    const part = rawPart.trim();
    const match = BANDWIDTH_PATTERN.exec(part);
    if (!match) throw new Error(`Invalid rate limit spec "${spec}": "${part}" is not understood; ${SPEC_HELP}`);
    const capacity = Number(match[1]);
    const amount = Number(match[2]);
    const periodMs = amount * UNIT_MS[match[3] as Unit];
    if (!Number.isSafeInteger(capacity) || capacity <= 0) {
      throw new Error(`Invalid rate limit spec "${spec}": the count in "${part}" must be a whole number > 0`);
    }
    if (!Number.isSafeInteger(periodMs) || periodMs <= 0) {
      throw new Error(`Invalid rate limit spec "${spec}": the period in "${part}" must be a whole number > 0`);
    }
    return { capacity, periodMs };
  });
}

/** The inverse of `parseLimitSpec`, using the largest unit that divides each period (for logs and docs). */
export function formatLimitSpec(bandwidths: readonly Bandwidth[]): string {
  const unitsLargestFirst = (Object.entries(UNIT_MS) as [Unit, number][]).sort((a, b) => b[1] - a[1]);
  return bandwidths
    .map(({ capacity, periodMs }) => {
      const [unit, unitMs] = unitsLargestFirst.find(([, ms]) => periodMs % ms === 0) ?? ["ms", 1];
      return `${capacity}/${periodMs / unitMs}${unit}`;
    })
    .join(",");
}

function tokenBucketPolicy(name: PolicyName, spec: string, failMode: FailMode, description: string): Policy {
  const bandwidths = parseLimitSpec(spec).map((bandwidth) => Object.freeze(bandwidth));
  return Object.freeze({
    name,
    algorithm: Object.freeze({ kind: "token-bucket" as const, bandwidths: Object.freeze(bandwidths) }),
    failMode,
    description,
  });
}

const DESCRIPTIONS: Record<PolicyName, { failMode: FailMode; description: string }> = {
  signInUsername: {
    failMode: "closed",
    description:
      "Sign-in attempts per normalised username and client address: slows guessing one account's password. " +
      "Fails closed: a store outage must not reopen unlimited guessing.",
  },
  signInAddress: {
    failMode: "closed",
    description:
      "Sign-in attempts per client address across all usernames: blunts password spraying, " +
      "where one address tries a common password against many accounts. Fails closed.",
  },
  register: {
    failMode: "closed",
    description:
      "Registrations per client address, refilled gradually (one token at a time, not all at the top of the hour) " +
      "so a full burst cannot be repeated every period. Fails closed.",
  },
  altchaChallenge: {
    failMode: "open",
    description:
      "ALTCHA challenge requests per client address: protects server capacity only, since each solution is " +
      "verified and spent later. Fails open so a store outage does not block every sign-in.",
  },
};

export const defaultLimitSpecs: Readonly<Record<PolicyName, string>> = Object.freeze({
  signInUsername: "5/15m",
  signInAddress: "30/15m",
  register: "10/1h",
  altchaChallenge: "30/1m,10/10s",
});

/** Environment variable that overrides each policy's limit spec. */
export const policyEnvVars: Readonly<Record<PolicyName, string>> = Object.freeze({
  signInUsername: "RATE_LIMIT_SIGN_IN_USERNAME",
  signInAddress: "RATE_LIMIT_SIGN_IN_ADDRESS",
  register: "RATE_LIMIT_REGISTER",
  altchaChallenge: "RATE_LIMIT_ALTCHA_CHALLENGE",
});

const POLICY_NAMES = Object.keys(defaultLimitSpecs) as PolicyName[];

function buildPolicies(specs: Record<PolicyName, string>): Policies {
  const entries = POLICY_NAMES.map((name) => {
    const { failMode, description } = DESCRIPTIONS[name];
    return [name, tokenBucketPolicy(name, specs[name], failMode, description)] as const;
  });
  return Object.freeze(Object.fromEntries(entries) as Record<PolicyName, Policy>);
}

export const defaultPolicies: Policies = buildPolicies(defaultLimitSpecs);

/**
 * The policies table with env overrides applied. An unset or blank variable keeps the default, since
 * an empty value (as compose files write) cannot mean "no limit". Every bad variable is reported at once.
 */
export function loadPolicies(env: Record<string, string | undefined>): Policies {
  const specs = { ...defaultLimitSpecs };
  const problems: string[] = [];
  for (const name of POLICY_NAMES) {
    const variable = policyEnvVars[name];
    const value = env[variable];
    if (value === undefined || value.trim() === "") continue;
    try {
      parseLimitSpec(value);
      specs[name] = value;
    } catch (error) {
      problems.push(`${variable}: ${(error as Error).message}`);
    }
  }
  if (problems.length > 0) throw new Error(`Invalid configuration: ${problems.join("; ")}`);
  return buildPolicies(specs);
}

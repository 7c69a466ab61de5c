import type { AppConfig } from "@/lib/config/env";
import type { Logger } from "@/lib/log/logger";
import type { Metrics } from "@/lib/log/metrics";
import { throttled } from "@/lib/log/throttled";
import { rangeBreachCheck, type BreachedPasswords } from "@/lib/password/breached";
import { argon2Hasher, argon2Params, type PasswordHasher } from "@/lib/password/hash";
import { HashBudget } from "@/lib/password/hash-budget";

type Deps = {
  clock: () => number;
  /** For the hash budget's recent pressure: never steps, unlike the wall clock. */
  monotonicMs: () => number;
  log: Logger;
  metrics: Metrics;
  /** Tests inject a counting hasher (GatehouseOptions.hasher). */
  hasher?: PasswordHasher;
};

/** The passwords room of a Gatehouse: Argon2id, the budget it runs in, and the breach check. */
export type PasswordsRoom = {
  hashBudget: HashBudget;
  /** Hashes and checks passwords (Argon2id at the configured parameters unless `options.hasher`), NFC inside. */
  hasher: PasswordHasher;
  /** Pwned Passwords range checks of new and signing-in passwords (off without BREACHED_PASSWORDS_URL); fail open. */
  breachedPasswords: BreachedPasswords;
};

export function buildPasswords(settings: AppConfig["passwords"], deps: Deps): PasswordsRoom {
  // Only weakened, never refused: warn (the metric counts each), once per 10 s.
  const reportBreachOutage = throttled(10_000, (reason: string) =>
    deps.log.warn({
      event: "breach_check_unavailable",
      reason,
      effect:
        reason === "slow"
          ? "checked, but slower than half the timeout: counted toward the breaker"
          : "failed open: the password was not checked against the corpus",
    }),
  );
  return {
    // Its pressure is remembered per second of a monotonic clock: on the wall clock, a step back
    // would keep an old peak "recent" for the step's length.
    hashBudget: new HashBudget(settings.hashConcurrency, settings.hashQueue, settings.hashTrustedSlots, deps.monotonicMs),
    hasher: deps.hasher ?? argon2Hasher(argon2Params(settings.argon2Profile)),
    breachedPasswords: rangeBreachCheck({
      url: settings.breachedUrl,
      timeoutMs: settings.breachedTimeoutMs,
      cacheMs: settings.breachedCacheMs,
      clock: deps.clock,
      onUnavailable: reportBreachOutage,
      onVerdict: (verdict) => deps.metrics.breachChecks.inc({ verdict }),
    }),
  };
}

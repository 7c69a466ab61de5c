import { circuitBreaker, CircuitState, ConsecutiveBreaker, handleAll, timeout, TimeoutStrategy, wrap } from "cockatiel";
import type { ReplayStore } from "@/lib/captcha/replay-store";

export type StoreGuardOptions = {
  /** Longest wait for one store call. */
  timeoutMs: number;
  /** Consecutive failures (timeouts included) that open the circuit. */
  breakerFailures: number;
  /** How long an open circuit refuses at once before one trial call is let through. */
  halfOpenAfterMs: number;
  onOpen?: () => void;
  onClose?: () => void;
};

export type StoreHealth = "up" | "down" | "recovering";

export type StoreGuard = {
  execute<T>(call: (signal: AbortSignal) => Promise<T>): Promise<T>;
  health(): StoreHealth;
};

/**
 * A timeout inside a circuit breaker around every call to a shared store. The timeout bounds
 * one slow call; the breaker turns "every request waits for the timeout" during an outage into
 * "every request fails at once", and lets a trial call through after a while, so the store is
 * used again when it recovers, without a restart. The caller applies the policy's fail mode.
 */
export function createStoreGuard(options: StoreGuardOptions): StoreGuard {
  const breaker = circuitBreaker(handleAll, {
    halfOpenAfter: options.halfOpenAfterMs,
    breaker: new ConsecutiveBreaker(options.breakerFailures),
  });
  breaker.onBreak(() => options.onOpen?.());
  breaker.onReset(() => options.onClose?.());
  // Aggressive: give up at the deadline even if the client library is still waiting.
  const policy = wrap(breaker, timeout(options.timeoutMs, TimeoutStrategy.Aggressive));
  return {
    execute: (call) => policy.execute(({ signal }) => call(signal)),
    health: () => (breaker.state === CircuitState.Closed ? "up" : breaker.state === CircuitState.HalfOpen ? "recovering" : "down"),
  };
}

export function guardReplayStore(store: ReplayStore, guard: StoreGuard): ReplayStore {
  return { kind: store.kind, claim: (id, expiresAtMs, nowMs) => guard.execute(() => store.claim(id, expiresAtMs, nowMs)) };
}

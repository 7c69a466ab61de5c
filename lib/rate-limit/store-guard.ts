import { circuitBreaker, CircuitState, ConsecutiveBreaker, handleAll, TaskCancelledError } from "cockatiel";
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
  return {
    execute: (call) => breaker.execute(() => withDeadline(call, options.timeoutMs)),
    health: () => (breaker.state === CircuitState.Closed ? "up" : breaker.state === CircuitState.HalfOpen ? "recovering" : "down"),
  };
}

/**
 * `call`, given up at the deadline even if the client library is still waiting (its signal is
 * aborted). The deadline is the store's, not the event loop's: when the timer runs, an answer that
 * is already waiting on the socket (a loop busy past the deadline, CPU load on a small host) is
 * read first, in the same turn's poll phase, and wins (issue 59: a healthy Redis cost a 503).
 */
function withDeadline<T>(call: (signal: AbortSignal) => Promise<T>, timeoutMs: number): Promise<T> {
  const controller = new AbortController();
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(
      () =>
        setImmediate(() => {
          if (settled) return;
          settled = true;
          const error = new TaskCancelledError(`Operation timed out after ${timeoutMs}ms`);
          controller.abort(error);
          reject(error);
        }),
      timeoutMs,
    );
    call(controller.signal).then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

export function guardReplayStore(store: ReplayStore, guard: StoreGuard): ReplayStore {
  return { kind: store.kind, claim: (id, expiresAtMs, nowMs) => guard.execute(() => store.claim(id, expiresAtMs, nowMs)) };
}

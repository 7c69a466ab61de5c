/**
 * Exponential lockout, as pure decisions. Only password checks count. A subject is either a
 * normalised username as seen from untrusted clients (existing account or not, so a lockout says
 * nothing about which accounts exist) or one known device (lib/devices).
 */
export type LockoutPolicy = {
  /** Failures that lock the username. */
  threshold: number;
  /** Lock length at the threshold; each further failure doubles it. */
  baseLockMs: number;
  maxLockMs: number;
  /** A failure older than this no longer counts: the streak starts again. */
  quietPeriodMs: number;
  /**
   * NIST SP 800-63B's cap on consecutive failures: at this count the subject stays locked until a
   * success resets it, or until `capHoldMs` pass with no further counted failure (a bound, while
   * there is no reset by email: without it, a patient attacker could keep an owner with no known
   * device out for good). Undefined: no cap.
   */
  capFailures?: number;
  capHoldMs?: number;
  /**
   * Counts an attempt even while the subject is locked (the lock grows as a failure after it would
   * grow it), instead of refusing it: for wrong answers the lock does not gate, such as a mailed
   * code sent on a pending sign-in its password step already admitted, which must count all the same.
   */
  countWhileLocked?: boolean;
};

export type LockoutState = {
  failureCount: number;
  lastFailureAtMs: number;
  lockedUntilMs: number | null;
};

/** `capped`: locked until a success, not until `lockedUntilMs` (which then says when to ask again). */
export type LockoutCheck = { locked: false } | { locked: true; retryAfterMs: number; lockedUntilMs: number; capped: boolean };

/**
 * A wall-clock step back this small is taken as it comes. Past it (NTP, a restored snapshot), a
 * stored lock would run on for the step's length (a 2-hour step held one for 8,100 s), and how long
 * ago its failure really was cannot be known: a lock or a cap's hold that ends further from now
 * than its policy allows is over. The streak's count stays, so the next failure locks again.
 */
export const CLOCK_STEP_SLACK_MS = 5_000;

function isCapped(state: LockoutState, nowMs: number, policy: LockoutPolicy): boolean {
  if (policy.capFailures === undefined || state.failureCount < policy.capFailures) return false;
  const sinceMs = nowMs - state.lastFailureAtMs;
  return sinceMs >= -CLOCK_STEP_SLACK_MS && sinceMs < (policy.capHoldMs ?? Number.POSITIVE_INFINITY);
}

export function checkLockout(state: LockoutState | null, nowMs: number, policy: LockoutPolicy): LockoutCheck {
  if (state && isCapped(state, nowMs, policy))
    return { locked: true, retryAfterMs: policy.maxLockMs, lockedUntilMs: nowMs + policy.maxLockMs, capped: true };
  if (!state?.lockedUntilMs || state.lockedUntilMs <= nowMs) return { locked: false };
  if (state.lockedUntilMs - nowMs > lockDurationMs(state.failureCount, policy) + CLOCK_STEP_SLACK_MS) return { locked: false };
  return { locked: true, retryAfterMs: state.lockedUntilMs - nowMs, lockedUntilMs: state.lockedUntilMs, capped: false };
}

/** Lock length after `failureCount` failures: none below the threshold, then base × 2^k, capped. */
export function lockDurationMs(failureCount: number, policy: LockoutPolicy): number {
  if (failureCount < policy.threshold) return 0;
  const doublings = failureCount - policy.threshold;
  // 2^k overflows to Infinity long before it matters; the cap keeps it finite.
  return Math.min(policy.maxLockMs, policy.baseLockMs * 2 ** Math.min(doublings, 52));
}

/**
 * `counted`: whether this attempt added to the streak (false for the repeat of a wrong password,
 * whose state is the streak as it was).
 */
export type AttemptDecision =
  { allowed: true; state: LockoutState; counted: boolean } | { allowed: false; check: Extract<LockoutCheck, { locked: true }> };

/** How many of a subject's last wrong passwords (per client) are remembered, so that a repeat of one is not counted again. */
export const REMEMBERED_WRONG_PASSWORDS = 3;

/**
 * Whether a failure now would add to the streak in `state` rather than start a new one: what the
 * streak's fingerprints of wrong passwords live as long as. A capped streak does not fade with the
 * quiet period, only when its hold ends.
 */
export function streakLive(state: LockoutState | null, nowMs: number, policy: LockoutPolicy): boolean {
  return state !== null && (isCapped(state, nowMs, policy) || nowMs - state.lastFailureAtMs < policy.quietPeriodMs);
}

/**
 * Admits one password check, counting it as a failure before the password is known. Counting
 * first is what bounds parallel guesses: N concurrent checks of a username take turns here, and
 * once the count reaches the threshold the next one is refused, however many were in flight.
 * A success then clears the count (the caller resets).
 * `repeat`: the password is one this client already failed with in the streak (its fingerprint
 * is remembered). It tells nothing new, so it is admitted without counting (Entra's smart lockout:
 * a phone with the old password must not lock the owner out); a lock still refuses it.
 */
export function admitAttempt(state: LockoutState | null, nowMs: number, policy: LockoutPolicy, repeat = false): AttemptDecision {
  const check = checkLockout(state, nowMs, policy);
  if (check.locked && !policy.countWhileLocked) return { allowed: false, check };
  if (repeat && state && streakLive(state, nowMs, policy)) return { allowed: true, state, counted: false };
  return { allowed: true, state: recordFailure(state, nowMs, policy), counted: true };
}

export function recordFailure(state: LockoutState | null, nowMs: number, policy: LockoutPolicy): LockoutState {
  const quiet = !state || !streakLive(state, nowMs, policy);
  const failureCount = (quiet ? 0 : state.failureCount) + 1;
  const lockMs = lockDurationMs(failureCount, policy);
  return {
    failureCount,
    lastFailureAtMs: nowMs,
    lockedUntilMs: lockMs > 0 ? nowMs + lockMs : null,
  };
}

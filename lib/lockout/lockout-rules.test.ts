import { describe, expect, it } from "vitest";
import {
  admitAttempt,
  checkLockout,
  lockDurationMs,
  recordFailure,
  streakLive,
  type LockoutPolicy,
  type LockoutState,
} from "./lockout-rules";

// The shipped schedule (lib/config/env.ts's defaults) without NIST's cap, which has tests of its own below.
const policy: LockoutPolicy = { threshold: 5, baseLockMs: 60_000, maxLockMs: 3_600_000, quietPeriodMs: 12 * 3_600_000 };

function failTimes(count: number, startMs: number, stepMs = 1_000): LockoutState | null {
  let state: LockoutState | null = null;
  for (let i = 0; i < count; i++) state = recordFailure(state, startMs + i * stepMs, policy);
  return state;
}

describe("lockout rules", () => {
  it("holds no lock longer than its policy when the wall clock steps back 2 hours", () => {
    const HOUR = 3_600_000;
    const T0 = 10 * HOUR;
    // The 7th failure: a 4-minute lock.
    const state = failTimes(7, T0);
    const lockedAt = T0 + 6_000;
    expect(checkLockout(state, lockedAt, policy)).toMatchObject({ locked: true, retryAfterMs: 240_000 });
    // 10 s later the wall clock steps back 2 hours: a lock that would end 2 hours on is over.
    const stepped = lockedAt + 10_000 - 2 * HOUR;
    expect(checkLockout(state, stepped, policy)).toEqual({ locked: false });
    // The streak's count stays: the next failure locks again, for the next length of the schedule, from now.
    const next = recordFailure(state, stepped, policy);
    expect(next).toMatchObject({ failureCount: 8, lockedUntilMs: stepped + 480_000 });
    expect(checkLockout(next, stepped + 1_000, policy)).toMatchObject({ locked: true, retryAfterMs: 479_000 });
    // A step within the slack is taken as it comes.
    expect(checkLockout(state, lockedAt - 4_000, policy)).toMatchObject({ locked: true, retryAfterMs: 244_000 });
    // NIST's cap: its hold ends at a step back too, not the step's length later.
    const capped: LockoutPolicy = { ...policy, capFailures: 7, capHoldMs: 15 * 60_000 };
    expect(checkLockout(state, lockedAt + 60_000, capped)).toMatchObject({ locked: true, capped: true });
    expect(checkLockout(state, stepped, capped)).toEqual({ locked: false });
  });

  it("does not lock below the threshold", () => {
    const state = failTimes(4, 0);
    expect(state?.failureCount).toBe(4);
    expect(checkLockout(state, 4_000, policy)).toEqual({ locked: false });
  });

  it("locks for 60 s at the 5th failure, then doubles per failure up to an hour", () => {
    expect([5, 6, 7, 8].map((n) => lockDurationMs(n, policy))).toEqual([60_000, 120_000, 240_000, 480_000]);
    expect(lockDurationMs(11, policy)).toBe(3_600_000);
    expect(lockDurationMs(10_000, policy)).toBe(3_600_000);
    const state = failTimes(5, 0);
    expect(checkLockout(state, 4_000, policy)).toEqual({ locked: true, retryAfterMs: 60_000, lockedUntilMs: 64_000, capped: false });
    expect(checkLockout(state, 64_000, policy)).toEqual({ locked: false });
  });

  it("starts the count again after the quiet period", () => {
    const state = failTimes(4, 0);
    const after = recordFailure(state, 3_000 + policy.quietPeriodMs, policy);
    expect(after.failureCount).toBe(1);
    expect(after.lockedUntilMs).toBeNull();
    const justBefore = recordFailure(state, 3_000 + policy.quietPeriodMs - 1, policy);
    expect(justBefore.failureCount).toBe(5);
  });

  it("counts an admitted attempt as a failure before it is checked, and refuses while locked", () => {
    const first = admitAttempt(null, 0, policy);
    expect(first).toEqual({ allowed: true, state: { failureCount: 1, lastFailureAtMs: 0, lockedUntilMs: null }, counted: true });
    const locked = failTimes(5, 0);
    expect(admitAttempt(locked, 5_000, policy)).toMatchObject({ allowed: false, check: { locked: true, capped: false } });
  });

  it("counts a wrong answer the lock does not gate even while locked, and the lock grows with it", () => {
    const counting = { ...policy, countWhileLocked: true };
    const locked = failTimes(5, 0);
    expect(checkLockout(locked, 5_000, counting)).toMatchObject({ locked: true });
    const counted = admitAttempt(locked, 5_000, counting);
    expect(counted).toEqual({ allowed: true, state: { failureCount: 6, lastFailureAtMs: 5_000, lockedUntilMs: 125_000 }, counted: true });
    // Below the threshold it counts as any attempt does.
    expect(admitAttempt(null, 0, counting)).toEqual(admitAttempt(null, 0, policy));
  });

  it("caps consecutive failures (NIST SP 800-63B): locked at the cap until a success, quiet period or not", () => {
    const capped = { ...policy, capFailures: 100 };
    const state: LockoutState = { failureCount: 99, lastFailureAtMs: 0, lockedUntilMs: null };
    const at100 = admitAttempt(state, 1_000, capped);
    expect(at100.allowed && at100.state.failureCount).toBe(100);
    const after = at100.allowed ? at100.state : null;
    const muchLater = 1_000 + 30 * 24 * 3_600_000;
    expect(checkLockout(after, muchLater, capped)).toMatchObject({ locked: true, capped: true, retryAfterMs: capped.maxLockMs });
    expect(recordFailure(after, muchLater, capped).failureCount).toBe(101);
    // Without a cap the same streak fades after the quiet period.
    expect(checkLockout(after, muchLater, policy)).toEqual({ locked: false });
  });

  it("lets a capped streak go once its hold passes with no counted failure", () => {
    const held = { ...policy, capFailures: 100, capHoldMs: 24 * 3_600_000 };
    const state: LockoutState = { failureCount: 100, lastFailureAtMs: 0, lockedUntilMs: 3_600_000 };
    expect(checkLockout(state, 24 * 3_600_000 - 1, held)).toMatchObject({ locked: true, capped: true });
    expect(checkLockout(state, 24 * 3_600_000, held)).toEqual({ locked: false });
    // …and the next failure starts a new streak (the quiet period has long passed).
    expect(recordFailure(state, 24 * 3_600_000, held).failureCount).toBe(1);
  });

  describe("a repeat of a wrong password the client already sent", () => {
    it("is admitted without counting while the streak lives", () => {
      const state = failTimes(2, 0);
      expect(admitAttempt(state, 2_000, policy, true)).toEqual({ allowed: true, state, counted: false });
      expect(admitAttempt(state, 2_000, policy, false)).toMatchObject({ allowed: true, state: { failureCount: 3 }, counted: true });
    });

    it("is still refused while locked", () => {
      expect(admitAttempt(failTimes(5, 0), 5_000, policy, true)).toMatchObject({ allowed: false, check: { locked: true } });
    });

    it("counts once the streak has gone quiet: its fingerprints went with it", () => {
      const state = failTimes(2, 0);
      const quiet = 1_000 + policy.quietPeriodMs;
      expect(streakLive(state, quiet - 1, policy)).toBe(true);
      expect(streakLive(state, quiet, policy)).toBe(false);
      expect(admitAttempt(state, quiet, policy, true)).toMatchObject({ allowed: true, state: { failureCount: 1 }, counted: true });
      // With no streak at all there is nothing to repeat.
      expect(admitAttempt(null, 0, policy, true)).toMatchObject({ counted: true, state: { failureCount: 1 } });
    });
  });
});

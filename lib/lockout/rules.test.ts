import { describe, expect, it } from "vitest";
import { checkLockout, DEFAULT_LOCKOUT_POLICY, lockDurationMs, recordFailure, type LockoutState } from "./rules";

const policy = DEFAULT_LOCKOUT_POLICY;

function failTimes(count: number, startMs: number, stepMs = 1_000): LockoutState | null {
  let state: LockoutState | null = null;
  for (let i = 0; i < count; i++) state = recordFailure(state, startMs + i * stepMs, policy);
  return state;
}

describe("lockout rules", () => {
  it("does not lock below the threshold", () => {
    const state = failTimes(4, 0);
    expect(state?.failureCount).toBe(4);
    expect(checkLockout(state, 4_000)).toEqual({ locked: false });
  });

  it("locks for 60 s at the 5th failure, then doubles per failure up to an hour", () => {
    expect([5, 6, 7, 8].map((n) => lockDurationMs(n, policy))).toEqual([60_000, 120_000, 240_000, 480_000]);
    expect(lockDurationMs(11, policy)).toBe(3_600_000);
    expect(lockDurationMs(10_000, policy)).toBe(3_600_000);
    const state = failTimes(5, 0);
    expect(checkLockout(state, 4_000)).toEqual({ locked: true, retryAfterMs: 60_000, lockedUntilMs: 64_000 });
    expect(checkLockout(state, 64_000)).toEqual({ locked: false });
  });

  it("starts the count again after the quiet period", () => {
    const state = failTimes(4, 0);
    const after = recordFailure(state, 3_000 + policy.quietPeriodMs, policy);
    expect(after.failureCount).toBe(1);
    expect(after.lockedUntilMs).toBeNull();
    const justBefore = recordFailure(state, 3_000 + policy.quietPeriodMs - 1, policy);
    expect(justBefore.failureCount).toBe(5);
  });
});

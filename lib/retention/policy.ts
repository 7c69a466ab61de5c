/** How long each kind of row is kept: every value comes from the configuration. */
export type RetentionPolicy = {
  /** Security events older than this are deleted. */
  securityEventMs: number;
  /** A lockout row whose last failure is older than this, and that locks nothing now, is deleted. */
  lockoutIdleMs: number;
  /** Revoked refresh families and ended browser sessions are kept this long (the account page, reuse detection). */
  endedSessionMs: number;
};

export type RetentionCutoffs = {
  securityEventsBefore: Date;
  lockoutsIdleBefore: Date;
  now: Date;
  endedBefore: Date;
};

/** The cutoffs for one run at `nowMs`: pure, so a test moves the clock instead of waiting. */
export function retentionCutoffs(nowMs: number, policy: RetentionPolicy): RetentionCutoffs {
  return {
    now: new Date(nowMs),
    securityEventsBefore: new Date(nowMs - policy.securityEventMs),
    lockoutsIdleBefore: new Date(nowMs - policy.lockoutIdleMs),
    endedBefore: new Date(nowMs - policy.endedSessionMs),
  };
}

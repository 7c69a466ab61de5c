/**
 * When a request without a known device may go on into Next.js (lib/http/door.ts), as pure
 * decisions of the door's state, the time and the event loop's recent utilisation.
 *
 * Strangers get in on an allowance: `strangersPerWindow` each `windowMs` while the loop was no
 * busier than `busyShare` over that window, saved up to `burst` at rest (a page's assets), and
 * none while it was busier. A loop kept under `busyShare` has a turn to spare whenever the owner's
 * request needs one: a flood waits at the door instead of in every step of the owner's sign-in.
 */
export type DoorPolicy = {
  /** Event-loop utilisation (0 to 1) above which a window lets no stranger in. */
  busyShare: number;
  windowMs: number;
  strangersPerWindow: number;
  /** Most strangers let in at once after a quiet spell. */
  burst: number;
  /** However busy the loop, a stranger gets in at least this often while any waits. */
  floorMs: number;
  /** Longest a stranger waits before a 503 with Retry-After. */
  maxWaitMs: number;
  /** Requests of one known device that go past the queue at once; more wait as strangers do. */
  perDeviceInFlight: number;
  /**
   * The share of the time known devices' password checks may hold strangers at the floor, and the
   * most saved up at rest: checks one after another (many accounts' devices, or a busy instance's
   * owners) cannot keep the door shut. A token bucket: a hold in force spends its time, and
   * `holdShare` of all time comes back, up to `holdBurstMs` (a stretch lasts burst / (1 - share)).
   */
  holdShare: number;
  holdBurstMs: number;
};

/** What the configuration sets (DOOR_BUSY_SHARE, DOOR_MAX_WAIT_MS); the rest is fixed below. */
export type DoorSettings = Pick<DoorPolicy, "busyShare" | "maxWaitMs">;

/** The whole policy (docs/decisions/0016-strangers-wait-at-the-door.md). */
export function doorPolicy(settings: DoorSettings): DoorPolicy {
  return {
    ...settings,
    windowMs: 10,
    strangersPerWindow: 2,
    burst: 20,
    // Work the door cannot hold (fast-path refusals, health checks, known devices, the parsing
    // itself) counts toward busy too: without a floor, enough of it would shut strangers out.
    floorMs: 100,
    // A browser opens at most 6 connections to a host over HTTP/1.1, so a page load of the owner's
    // (its document, scripts and styles at once) goes past the queue whole.
    perDeviceInFlight: 6,
    // A sign-in's check takes 15-30 ms: an owner's fits the burst several times over, and back to back
    // checks hold strangers about 133 ms at a stretch and a quarter of the time (about 350 ms in any second).
    holdShare: 0.25,
    holdBurstMs: 100,
  };
}

export type Allowance = { strangers: number; refilledAtMs: number };

export function freshAllowance(nowMs: number, policy: Pick<DoorPolicy, "burst">): Allowance {
  return { strangers: policy.burst, refilledAtMs: nowMs };
}

/** Whether a window is due: until then the utilisation is not sampled, so windows are never shorter. */
export function windowDue(allowance: Allowance, nowMs: number, policy: Pick<DoorPolicy, "windowMs">): boolean {
  return nowMs - allowance.refilledAtMs >= policy.windowMs;
}

/**
 * The allowance once the windows since its last refill are over, the loop having been
 * `utilisation` busy through them: a busy spell takes away what was saved, a quiet one adds
 * `strangersPerWindow` a window up to `burst`.
 */
export function refill(allowance: Allowance, nowMs: number, utilisation: number, policy: DoorPolicy): Allowance {
  if (!windowDue(allowance, nowMs, policy)) return allowance;
  if (utilisation > policy.busyShare) return { strangers: 0, refilledAtMs: nowMs };
  const windows = Math.floor((nowMs - allowance.refilledAtMs) / policy.windowMs);
  return { strangers: Math.min(policy.burst, allowance.strangers + windows * policy.strangersPerWindow), refilledAtMs: nowMs };
}

/** A stranger's wait that ran out: try again in about as long again. */
export function retryAfterMsOf(policy: Pick<DoorPolicy, "maxWaitMs">): number {
  return Math.max(1_000, policy.maxWaitMs);
}

/**
 * The hold's credit (ms it may still hold), when it was last sampled, whether it was in force then
 * and whether anyone waited at the door then (only then does the hold cost strangers anything).
 */
export type HoldLedger = { creditMs: number; lastSampleMs: number; inForce: boolean; waiting: boolean };

export function freshHoldLedger(nowMs: number, policy: Pick<DoorPolicy, "holdBurstMs">): HoldLedger {
  return { creditMs: policy.holdBurstMs, lastSampleMs: nowMs, inForce: false, waiting: false };
}

/**
 * The ledger once a check was seen running (`holding`) or not, and strangers `waiting` or not, now.
 * The time since the last sample counts as held, all of it, when the hold was in force then and
 * strangers waited: a loop that turns late kept them out that long (1 a turn, on the floor), so a
 * slow loop cannot stretch the hold past its share; a gap when nobody waited costs nothing.
 */
export function sampleHold(
  ledger: HoldLedger,
  nowMs: number,
  holding: boolean,
  waiting: boolean,
  policy: Pick<DoorPolicy, "holdShare" | "holdBurstMs">,
): HoldLedger {
  // A clock reading that is not a number counts no time and is not kept.
  const sampledMs = Number.isFinite(nowMs) ? nowMs : ledger.lastSampleMs;
  const elapsedMs = Math.max(0, sampledMs - ledger.lastSampleMs);
  const heldMs = ledger.inForce && ledger.waiting ? elapsedMs : 0;
  const creditMs = Math.min(policy.holdBurstMs, ledger.creditMs + elapsedMs * policy.holdShare - heldMs);
  return { creditMs, lastSampleMs: sampledMs, inForce: holding && creditMs > 0, waiting };
}

/** Whether a running check holds strangers now (as of the last sample). */
export function holdInForce(ledger: HoldLedger): boolean {
  return ledger.inForce;
}

/**
 * How much proof of work a challenge asks for. Idle, it costs the base size; as the hash budget
 * fills or the requesting address keeps failing, each level doubles it, up to MAX_LEVEL (8×: at
 * the default 100,000 that is 800,000 hashes, a few seconds on a mid-range phone). A browser
 * with a valid known-device cookie always gets the base size.
 *
 *   level  budget pressure (last 10 s)   or failed checks from the address (last 15 min)
 *   0      < 0.25                         < 3
 *   1      ≥ 0.25                         ≥ 3
 *   2      ≥ 0.50                         ≥ 10
 *   3      ≥ 0.75                         ≥ 30
 */
export const MAX_LEVEL = 3;

const PRESSURE_STEPS = [0.25, 0.5, 0.75];
const FAILURE_STEPS = [3, 10, 30];

export type Pressure = { budgetPressure: number; addressFailures: number; knownDevice: boolean };

function stepsReached(value: number, steps: readonly number[]): number {
  return steps.filter((step) => value >= step).length;
}

export function challengeLevel(pressure: Pressure): number {
  const due = levelDue(pressure);
  return due.knownDevice ? 0 : Math.max(due.addressLevel, due.pressureLevel);
}

/**
 * What a solution must show when it is used, each part from its own signal: a known device of
 * the very account signing in owes nothing (the device is checked there, not when the challenge
 * was fetched, so another account's cookie cheapens nothing); anyone else owes the address's
 * level and the budget's.
 */
export type LevelDue = { knownDevice: boolean; addressLevel: number; pressureLevel: number };

export function levelDue({ budgetPressure, addressFailures, knownDevice }: Pressure): LevelDue {
  return {
    knownDevice,
    addressLevel: Math.min(MAX_LEVEL, stepsReached(addressFailures, FAILURE_STEPS)),
    pressureLevel: Math.min(MAX_LEVEL, stepsReached(budgetPressure, PRESSURE_STEPS)),
  };
}

/** What the challenge route signed into a challenge: its level, the budget's level then, and when. */
export type ChallengeTerms = { level: number; pressureLevel: number; issuedAtMs: number };

/**
 * Pressure can rise while a person solves (the budget fills within seconds). A challenge issued
 * at the pressure level then due (not lowered by a device cookie) and used within this long
 * stands; an older one, fetched in a quiet moment and kept, does not while the pressure lasts.
 */
export const PRESSURE_GRACE_MS = 60_000;

export function meetsLevel(due: LevelDue, terms: ChallengeTerms, nowMs: number): boolean {
  if (due.knownDevice) return true;
  if (!(terms.level >= due.addressLevel)) return false;
  if (terms.level >= due.pressureLevel) return true;
  return terms.level >= terms.pressureLevel && nowMs - terms.issuedAtMs <= PRESSURE_GRACE_MS;
}

export function maxCounterAt(baseMaxCounter: number, level: number): number {
  return baseMaxCounter * 2 ** Math.min(MAX_LEVEL, Math.max(0, level));
}

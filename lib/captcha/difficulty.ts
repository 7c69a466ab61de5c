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

export function challengeLevel({ budgetPressure, addressFailures, knownDevice }: Pressure): number {
  if (knownDevice) return 0;
  return Math.min(MAX_LEVEL, Math.max(stepsReached(budgetPressure, PRESSURE_STEPS), stepsReached(addressFailures, FAILURE_STEPS)));
}

export function maxCounterAt(baseMaxCounter: number, level: number): number {
  return baseMaxCounter * 2 ** Math.min(MAX_LEVEL, Math.max(0, level));
}

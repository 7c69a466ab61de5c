import type { AlgorithmPolicy, Decision } from "./algorithms";

/**
 * One contract for every implementation of the limiter's decisions: algorithms.ts, and each store
 * that persists their state (memory, PostgreSQL, and the Redis Lua script, which mirrors the
 * TypeScript by hand). Each case starts from an empty key; its steps run in order, each at
 * `T0_MS + atMs`, and must give exactly the decision in the row. algorithms.test.ts and every
 * store's tests run the whole table, so the Lua script and the TypeScript cannot drift apart.
 */
export type DecisionCase = {
  name: string;
  algorithm: AlgorithmPolicy;
  /** [atMs, allowed, remaining, retryAfterMs, resetAfterMs] */
  steps: readonly (readonly [number, boolean, number, number, number])[];
};

const SECOND_MS = 1_000;
const MINUTE_MS = 60_000;
// A whole number of minutes since the epoch, so sliding windows start exactly here.
export const T0_MS = 28_333_334 * MINUTE_MS;

export const DECISION_CASES: readonly DecisionCase[] = [
  {
    name: "token bucket 5/15m: drains, refuses, refills one token every 3 minutes",
    algorithm: { kind: "token-bucket", bandwidths: [{ capacity: 5, periodMs: 15 * MINUTE_MS }] },
    steps: [
      [0, true, 4, 0, 180_000],
      [0, true, 3, 0, 360_000],
      [0, true, 2, 0, 540_000],
      [0, true, 1, 0, 720_000],
      [0, true, 0, 0, 900_000],
      [0, false, 0, 180_000, 900_000],
      [1, false, 0, 179_999, 899_999],
      [3 * MINUTE_MS - 1, false, 0, 1, 720_001],
      [3 * MINUTE_MS, true, 0, 0, 900_000],
      [3 * MINUTE_MS, false, 0, 180_000, 900_000],
      [18 * MINUTE_MS, true, 4, 0, 180_000],
    ],
  },
  {
    name: "token bucket 5/15m,2/10s: the short bandwidth stops a burst, the long one the total",
    algorithm: {
      kind: "token-bucket",
      bandwidths: [
        { capacity: 5, periodMs: 15 * MINUTE_MS },
        { capacity: 2, periodMs: 10 * SECOND_MS },
      ],
    },
    steps: [
      [0, true, 1, 0, 180_000],
      [0, true, 0, 0, 360_000],
      [0, false, 0, 5_000, 360_000],
      [4_999, false, 0, 1, 355_001],
      [5_000, true, 0, 0, 535_000],
      [10_000, true, 0, 0, 710_000],
      [15_000, true, 0, 0, 885_000],
      [20_000, false, 0, 160_000, 880_000],
      [25_000, false, 0, 155_000, 875_000],
    ],
  },
  {
    name: "token bucket 3/1s: a clock that steps back refills nothing",
    algorithm: { kind: "token-bucket", bandwidths: [{ capacity: 3, periodMs: SECOND_MS }] },
    steps: [
      [1_000, true, 2, 0, 334],
      [1_000, true, 1, 0, 667],
      [1_000, true, 0, 0, 1_000],
      [1_000, false, 0, 334, 1_000],
      [0, false, 0, 1_334, 2_000],
      [1_333, false, 0, 1, 667],
      [1_334, true, 0, 0, 1_000],
    ],
  },
  {
    name: "sliding window 3/1m: the previous window's count weighs less as the window slides",
    algorithm: { kind: "sliding-window", limit: 3, windowMs: MINUTE_MS },
    steps: [
      [10_000, true, 2, 0, 110_000],
      [20_000, true, 1, 0, 100_000],
      [30_000, true, 0, 0, 90_000],
      [40_000, false, 0, 40_000, 80_000],
      [70_000, false, 0, 10_000, 50_000],
      [80_000, true, 0, 0, 100_000],
      [90_000, false, 0, 10_000, 90_000],
      [180_001, true, 2, 0, 119_999],
    ],
  },
];

/** A case's decisions as made by `consume` (one fresh key per case), beside the rows it must match. */
export async function runDecisionCase(
  decisionCase: DecisionCase,
  consume: (nowMs: number) => Decision | Promise<Decision>,
): Promise<{ actual: Decision[]; expected: Decision[] }> {
  const actual: Decision[] = [];
  for (const [atMs] of decisionCase.steps) {
    const { allowed, remaining, retryAfterMs, resetAfterMs } = await consume(T0_MS + atMs);
    actual.push({ allowed, remaining, retryAfterMs, resetAfterMs });
  }
  const expected = decisionCase.steps.map(([, allowed, remaining, retryAfterMs, resetAfterMs]) => ({
    allowed,
    remaining,
    retryAfterMs,
    resetAfterMs,
  }));
  return { actual, expected };
}

import { describe, expect, it } from "vitest";
import {
  consumeSlidingWindow,
  consumeTokenBucket,
  decide,
  type Bandwidth,
  type SlidingWindowAlgorithm,
  type SlidingWindowState,
  type TokenBucketAlgorithm,
  type TokenBucketState,
} from "@/lib/rate-limit/algorithms";
import { DECISION_CASES, runDecisionCase } from "@/tests/fixtures/decision-cases";

const SECOND_MS = 1_000;
const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
// A whole number of minutes since the epoch, so sliding windows start exactly here.
const T0_MS = 28_333_334 * MINUTE_MS;

function tokenBucket(...bandwidths: Bandwidth[]): TokenBucketAlgorithm {
  return { kind: "token-bucket", bandwidths };
}

/** Consumes `count` times at one instant, returning every decision and the final state. */
function consumeMany(algorithm: TokenBucketAlgorithm, state: TokenBucketState | undefined, nowMs: number, count: number) {
  const decisions = [];
  for (let i = 0; i < count; i++) {
    const decision = consumeTokenBucket(state, nowMs, algorithm);
    decisions.push(decision);
    state = decision.nextState;
  }
  return { decisions, state, admitted: decisions.filter((d) => d.allowed).length };
}

/** A client that takes every token the moment it exists, checking every `stepMs` from `fromMs` to `toMs`. */
function admitGreedily(algorithm: TokenBucketAlgorithm, fromMs: number, toMs: number, stepMs: number) {
  let state: TokenBucketState | undefined;
  let admitted = 0;
  for (let nowMs = fromMs; nowMs <= toMs; nowMs += stepMs) {
    for (;;) {
      const decision = consumeTokenBucket(state, nowMs, algorithm);
      state = decision.nextState;
      if (!decision.allowed) break;
      admitted += 1;
    }
  }
  return admitted;
}

describe("token bucket", () => {
  it("starts full and counts down remaining", () => {
    const { decisions } = consumeMany(tokenBucket({ capacity: 5, periodMs: 15 * MINUTE_MS }), undefined, T0_MS, 6);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
    expect(decisions[0]!.retryAfterMs).toBe(0);
  });

  it("admits about twice the capacity in the first period after a full bucket is drained (Bucket4j's greedy refill)", () => {
    const perMinute100 = tokenBucket({ capacity: 100, periodMs: MINUTE_MS });
    expect(admitGreedily(perMinute100, T0_MS, T0_MS + MINUTE_MS, 1)).toBe(200);
    expect(admitGreedily(perMinute100, T0_MS, T0_MS + MINUTE_MS - 1, 1)).toBe(199);
    const perMinute50 = tokenBucket({ capacity: 50, periodMs: MINUTE_MS });
    expect(admitGreedily(perMinute50, T0_MS, T0_MS + MINUTE_MS, 1)).toBe(100);
  });

  it("refills one token every periodMs / capacity, not all at once", () => {
    const algorithm = tokenBucket({ capacity: 100, periodMs: MINUTE_MS });
    const drained = consumeMany(algorithm, undefined, T0_MS, 100).state;
    expect(consumeTokenBucket(drained, T0_MS + 599, algorithm).allowed).toBe(false);
    expect(consumeMany(algorithm, drained, T0_MS + 600, 3).admitted).toBe(1);
    expect(consumeMany(algorithm, drained, T0_MS + 30 * SECOND_MS, 100).admitted).toBe(50);
  });

  it("applies several bandwidths to one bucket: 9,999 per hour and 20 per second", () => {
    const algorithm = tokenBucket({ capacity: 9_999, periodMs: HOUR_MS }, { capacity: 20, periodMs: SECOND_MS });
    const first = consumeMany(algorithm, undefined, T0_MS, 100);
    expect(first.admitted).toBe(20);
    expect(first.decisions[0]!.remaining).toBe(19);
    expect(first.decisions[20]!.retryAfterMs).toBe(50);
    // Refused attempts consumed nothing from the hourly bandwidth.
    expect(first.state!.tokens).toEqual([9_999 - 20, 0]);

    const second = consumeMany(algorithm, first.state, T0_MS + SECOND_MS, 100);
    expect(second.admitted).toBe(20);
    expect(consumeMany(algorithm, second.state, T0_MS + SECOND_MS + 49, 1).admitted).toBe(0);
  });

  it("lets the hourly bandwidth bind once it runs out", () => {
    const algorithm = tokenBucket({ capacity: 30, periodMs: HOUR_MS }, { capacity: 20, periodMs: SECOND_MS });
    const first = consumeMany(algorithm, undefined, T0_MS, 100);
    const second = consumeMany(algorithm, first.state, T0_MS + SECOND_MS, 100);
    // 10 left in the hourly bandwidth plus 1000 ms * 30 / hour of refill.
    expect(second.admitted).toBe(10);
    // 1 - 30/3600 tokens short, at 120,000 ms per token.
    expect(second.decisions[10]!.retryAfterMs).toBe(119_000);
  });

  describe("retryAfterMs", () => {
    const fivePer15m = tokenBucket({ capacity: 5, periodMs: 15 * MINUTE_MS });
    const drained = consumeMany(fivePer15m, undefined, T0_MS, 5).state;

    it("is the exact wait for the next token", () => {
      expect(consumeTokenBucket(drained, T0_MS, fivePer15m).retryAfterMs).toBe(180_000);
      expect(consumeTokenBucket(drained, T0_MS + 1, fivePer15m).retryAfterMs).toBe(179_999);
      expect(consumeTokenBucket(drained, T0_MS + 179_999, fivePer15m).retryAfterMs).toBe(1);
      expect(consumeTokenBucket(drained, T0_MS + 180_000, fivePer15m).allowed).toBe(true);
    });

    it("rounds a fractional wait up to the whole millisecond at which the request is allowed", () => {
      const threePer10s = tokenBucket({ capacity: 3, periodMs: 10 * SECOND_MS });
      const empty = consumeMany(threePer10s, undefined, T0_MS, 3).state;
      expect(consumeTokenBucket(empty, T0_MS, threePer10s).retryAfterMs).toBe(3_334);
      const justBefore = consumeTokenBucket(empty, T0_MS + 3_333, threePer10s);
      expect(justBefore).toMatchObject({ allowed: false, retryAfterMs: 1 });
      expect(consumeTokenBucket(justBefore.nextState, T0_MS + 3_334, threePer10s).allowed).toBe(true);
    });

    it("is the longest wait over the bandwidths", () => {
      const algorithm = tokenBucket({ capacity: 5, periodMs: 15 * MINUTE_MS }, { capacity: 2, periodMs: 10 * SECOND_MS });
      const burst = consumeMany(algorithm, undefined, T0_MS, 3);
      expect(burst.admitted).toBe(2);
      // The 10-second bandwidth binds: 5,000 ms per token.
      expect(burst.decisions[2]!.retryAfterMs).toBe(5_000);

      const second = consumeMany(algorithm, burst.state, T0_MS + 10 * SECOND_MS, 2);
      const third = consumeMany(algorithm, second.state, T0_MS + 20 * SECOND_MS, 2);
      expect([second.admitted, third.admitted]).toEqual([2, 1]);
      // Now the 15-minute bandwidth binds: it holds 20 s of refill = 1/9 token, 8/9 * 180,000 ms short.
      expect(third.decisions[1]!.retryAfterMs).toBe(160_000);
    });

    it("is 0 when allowed", () => {
      expect(consumeTokenBucket(undefined, T0_MS, fivePer15m).retryAfterMs).toBe(0);
    });
  });

  describe("resetAfterMs", () => {
    it("is the time until every bandwidth is full again", () => {
      const fivePer15m = tokenBucket({ capacity: 5, periodMs: 15 * MINUTE_MS });
      const { decisions } = consumeMany(fivePer15m, undefined, T0_MS, 6);
      expect(decisions.map((d) => d.resetAfterMs)).toEqual([180_000, 360_000, 540_000, 720_000, 900_000, 900_000]);

      const twoBandwidths = tokenBucket({ capacity: 5, periodMs: 15 * MINUTE_MS }, { capacity: 2, periodMs: 10 * SECOND_MS });
      expect(consumeMany(twoBandwidths, undefined, T0_MS, 2).decisions[1]!.resetAfterMs).toBe(360_000);
    });

    it("is exactly when forgetting the state changes no decision, and not earlier", () => {
      const algorithm = tokenBucket({ capacity: 7, periodMs: 10 * SECOND_MS }, { capacity: 3, periodMs: 1_300 });
      // A fixed pseudo-random walk keeps the test repeatable.
      let seed = 42;
      const nextRandom = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
      let state: TokenBucketState | undefined;
      let nowMs = T0_MS;
      for (let step = 0; step < 300; step++) {
        nowMs += Math.floor(nextRandom() * 1_500);
        const decision = consumeTokenBucket(state, nowMs, algorithm);
        state = decision.nextState;
        const resetAtMs = nowMs + decision.resetAfterMs;
        expect(consumeTokenBucket(state, resetAtMs, algorithm)).toEqual(consumeTokenBucket(undefined, resetAtMs, algorithm));
        expect(consumeTokenBucket(state, resetAtMs - 1, algorithm).nextState).not.toEqual(
          consumeTokenBucket(undefined, resetAtMs - 1, algorithm).nextState,
        );
      }
    });
  });

  it("treats a clock that steps back as no time elapsed, without refilling the gap twice", () => {
    const fivePer15m = tokenBucket({ capacity: 5, periodMs: 15 * MINUTE_MS });
    const drained = consumeMany(fivePer15m, undefined, T0_MS, 5).state;

    const earlier = consumeTokenBucket(drained, T0_MS - 5_000, fivePer15m);
    expect(earlier).toMatchObject({ allowed: false, retryAfterMs: 185_000, resetAfterMs: 905_000 });
    expect(earlier.nextState).toEqual({ kind: "token-bucket", tokens: [0], lastRefillMs: T0_MS });

    expect(consumeMany(fivePer15m, earlier.nextState, T0_MS + 179_999, 1).admitted).toBe(0);
    expect(consumeMany(fivePer15m, earlier.nextState, T0_MS + 180_000, 5).admitted).toBe(1);
  });

  it("waits no longer than its policy after the wall clock steps back 2 hours, and earns no refill for the step", () => {
    const fivePer15m = tokenBucket({ capacity: 5, periodMs: 15 * MINUTE_MS });
    const drained = consumeMany(fivePer15m, undefined, T0_MS, 5).state;
    const stepped = consumeTokenBucket(drained, T0_MS + 25_000 - 2 * 60 * MINUTE_MS, fivePer15m);
    expect(stepped).toMatchObject({ allowed: false, retryAfterMs: 180_000, resetAfterMs: 900_000 });
    expect(stepped.nextState).toEqual({ kind: "token-bucket", tokens: [0], lastRefillMs: T0_MS + 25_000 - 2 * 60 * MINUTE_MS });
  });

  it("keeps tokens in a clock step back and measures waits from the latest time seen", () => {
    const twoPer10s = tokenBucket({ capacity: 2, periodMs: 10 * SECOND_MS });
    const once = consumeTokenBucket(undefined, T0_MS, twoPer10s);
    const earlier = consumeTokenBucket(once.nextState, T0_MS - 5_000, twoPer10s);
    expect(earlier).toMatchObject({ allowed: true, remaining: 0, resetAfterMs: 15_000 });
    expect(consumeTokenBucket(earlier.nextState, T0_MS - 5_000, twoPer10s).retryAfterMs).toBe(10_000);
  });
});

describe("sliding window", () => {
  const tenPerMinute: SlidingWindowAlgorithm = { kind: "sliding-window", limit: 10, windowMs: MINUTE_MS };

  function consumeWindowMany(state: SlidingWindowState | undefined, nowMs: number, count: number, algorithm = tenPerMinute) {
    const decisions = [];
    for (let i = 0; i < count; i++) {
      const decision = consumeSlidingWindow(state, nowMs, algorithm);
      decisions.push(decision);
      state = decision.nextState;
    }
    return { decisions, state, admitted: decisions.filter((d) => d.allowed).length };
  }

  it("admits the limit in one window and does not count refused requests", () => {
    const { decisions, state } = consumeWindowMany(undefined, T0_MS, 12);
    expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
    expect(decisions.map((d) => d.remaining).slice(0, 10)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    expect(state).toEqual({ kind: "sliding-window", windowStartMs: T0_MS, currentCount: 10, previousCount: 0 });
  });

  it("weights the previous window by its overlap", () => {
    const full = consumeWindowMany(undefined, T0_MS, 10).state;
    // Half-way through the next window the previous 10 weigh 5.
    const halfWay = consumeWindowMany(full, T0_MS + MINUTE_MS + 30 * SECOND_MS, 7);
    expect(halfWay.admitted).toBe(5);
    expect(halfWay.decisions.map((d) => d.remaining).slice(0, 5)).toEqual([4, 3, 2, 1, 0]);
    // A quarter of the way, 7.5 weigh: 2 more fit (9.5), a third would make 10.5.
    expect(consumeWindowMany(full, T0_MS + MINUTE_MS + 15 * SECOND_MS, 5).admitted).toBe(2);
  });

  it("computes retryAfterMs exactly when the wait ends inside the current window", () => {
    const full = consumeWindowMany(undefined, T0_MS, 10).state;
    const halfWay = consumeWindowMany(full, T0_MS + 90 * SECOND_MS, 6);
    // 10 * (end - t) / 60,000 + 5 + 1 = 10  =>  t = end - 24,000 = T0 + 96,000.
    expect(halfWay.decisions[5]!.retryAfterMs).toBe(6_000);
    expect(consumeSlidingWindow(halfWay.state, T0_MS + 95_999, tenPerMinute).allowed).toBe(false);
    expect(consumeSlidingWindow(halfWay.state, T0_MS + 96_000, tenPerMinute).allowed).toBe(true);
  });

  it("computes retryAfterMs exactly when the wait reaches into the next window", () => {
    const full = consumeWindowMany(undefined, T0_MS, 11);
    // Next window: 10 * (nextEnd - t) / 60,000 + 1 = 10  =>  t = T0 + 120,000 - 54,000.
    expect(full.decisions[10]!.retryAfterMs).toBe(66_000);
    expect(consumeSlidingWindow(full.state, T0_MS + 65_999, tenPerMinute)).toMatchObject({ allowed: false, retryAfterMs: 1 });
    expect(consumeSlidingWindow(full.state, T0_MS + 66_000, tenPerMinute).allowed).toBe(true);
  });

  it("with a limit of 1 waits until the window after next", () => {
    const onePerMinute: SlidingWindowAlgorithm = { kind: "sliding-window", limit: 1, windowMs: MINUTE_MS };
    const { decisions, state } = consumeWindowMany(undefined, T0_MS + 30 * SECOND_MS, 2, onePerMinute);
    expect(decisions[1]!.retryAfterMs).toBe(90_000);
    expect(consumeSlidingWindow(state, T0_MS + 119_999, onePerMinute).allowed).toBe(false);
    expect(consumeSlidingWindow(state, T0_MS + 120_000, onePerMinute).allowed).toBe(true);
  });

  it("rounds a fractional retryAfterMs up", () => {
    const sevenPerMinute: SlidingWindowAlgorithm = { kind: "sliding-window", limit: 7, windowMs: MINUTE_MS };
    const { state } = consumeWindowMany(undefined, T0_MS, 7, sevenPerMinute);
    // t = T0 + 120,000 - 6 * 60,000 / 7 = T0 + 68,571.43
    const refused = consumeSlidingWindow(state, T0_MS, sevenPerMinute);
    expect(refused.retryAfterMs).toBe(68_572);
    expect(consumeSlidingWindow(state, T0_MS + 68_571, sevenPerMinute).allowed).toBe(false);
    expect(consumeSlidingWindow(state, T0_MS + 68_572, sevenPerMinute).allowed).toBe(true);
  });

  it("resetAfterMs is when the weighted count reaches 0: the end of the window after the current one", () => {
    const first = consumeSlidingWindow(undefined, T0_MS, tenPerMinute);
    expect(first.resetAfterMs).toBe(2 * MINUTE_MS);
    const later = consumeSlidingWindow(first.nextState, T0_MS + 90 * SECOND_MS, tenPerMinute);
    expect(later.resetAfterMs).toBe(90 * SECOND_MS);

    const resetAtMs = T0_MS + 180 * SECOND_MS;
    expect(consumeSlidingWindow(later.nextState, resetAtMs - 1, tenPerMinute).remaining).toBe(8);
    expect(consumeSlidingWindow(later.nextState, resetAtMs, tenPerMinute)).toEqual(
      consumeSlidingWindow(undefined, resetAtMs, tenPerMinute),
    );
  });

  it("resetAfterMs ends with the current window when only the previous window counts", () => {
    const full = consumeWindowMany(undefined, T0_MS, 10).state;
    // The previous 10 weigh fully at the window start; 9 * 60,000 / 10 ms later they weigh 9.
    expect(consumeSlidingWindow(full, T0_MS + MINUTE_MS, tenPerMinute)).toMatchObject({
      allowed: false,
      retryAfterMs: 6_000,
      resetAfterMs: MINUTE_MS,
    });
  });

  it("moves its counts to now's window when the wall clock steps back 2 hours: no wait longer than two windows", () => {
    const full = consumeWindowMany(undefined, T0_MS, 10).state;
    const stepped = consumeSlidingWindow(full, T0_MS + 25_000 - 2 * 60 * MINUTE_MS, tenPerMinute);
    expect(stepped.allowed).toBe(false);
    expect(stepped.retryAfterMs).toBeLessThanOrEqual(2 * MINUTE_MS);
    expect(stepped.nextState).toMatchObject({ currentCount: 10, windowStartMs: T0_MS - 2 * 60 * MINUTE_MS });
  });

  it("stays in the latest window seen when the clock steps back", () => {
    const full = consumeWindowMany(undefined, T0_MS, 10).state;
    const nextWindow = consumeSlidingWindow(full, T0_MS + MINUTE_MS, tenPerMinute);
    expect(nextWindow.allowed).toBe(false);
    // 30 s earlier than the state's window start: waits are measured from that start, plus the 30 s.
    const stepBack = consumeSlidingWindow(nextWindow.nextState, T0_MS + 30 * SECOND_MS, tenPerMinute);
    expect(stepBack).toMatchObject({ allowed: false, retryAfterMs: 30_000 + 6_000, resetAfterMs: 30_000 + MINUTE_MS });
    expect(stepBack.nextState).toEqual(nextWindow.nextState);
  });
});

describe("decide", () => {
  const fivePer15m = tokenBucket({ capacity: 5, periodMs: 15 * MINUTE_MS });
  const tenPerMinute: SlidingWindowAlgorithm = { kind: "sliding-window", limit: 10, windowMs: MINUTE_MS };

  it("dispatches on the policy kind", () => {
    expect(decide(fivePer15m, undefined, T0_MS)).toEqual(consumeTokenBucket(undefined, T0_MS, fivePer15m));
    expect(decide(tenPerMinute, undefined, T0_MS)).toEqual(consumeSlidingWindow(undefined, T0_MS, tenPerMinute));
    const afterOne = decide(fivePer15m, undefined, T0_MS).nextState;
    expect(decide(fivePer15m, afterOne, T0_MS).remaining).toBe(3);
  });

  it("starts fresh when the stored state belongs to another algorithm", () => {
    const windowState = consumeSlidingWindow(undefined, T0_MS, tenPerMinute).nextState;
    expect(decide(fivePer15m, windowState, T0_MS)).toEqual(consumeTokenBucket(undefined, T0_MS, fivePer15m));
  });

  it("refuses a non-finite time instead of storing it", () => {
    expect(() => decide(fivePer15m, undefined, Number.NaN)).toThrow(/non-finite/);
  });
});

describe("the shared decision table (tests/fixtures/decision-cases.ts), which every store runs too", () => {
  for (const decisionCase of DECISION_CASES) {
    it(decisionCase.name, async () => {
      let state: Parameters<typeof decide>[1];
      const { actual, expected } = await runDecisionCase(decisionCase, (nowMs, cost) => {
        const { nextState, ...decision } = decide(decisionCase.algorithm, state, nowMs, cost);
        state = nextState;
        return decision;
      });
      expect(actual).toEqual(expected);
    });
  }
});

/**
 * Rate-limit decisions as pure functions of (state, nowMs, policy): no clock, no I/O. A store loads
 * the state for a key, calls `decide`, and persists `nextState` in the same atomic step.
 */

/** `capacity` tokens, refilled continuously over `periodMs` (Bucket4j's greedy refill). */
export type Bandwidth = { capacity: number; periodMs: number };

/** One bucket limited by every bandwidth at once, e.g. 5 per 15 minutes AND 2 per 10 seconds. */
export type TokenBucketAlgorithm = { kind: "token-bucket"; bandwidths: readonly Bandwidth[] };

/** Cloudflare-style sliding window: the previous fixed window's count weighted by its overlap. */
export type SlidingWindowAlgorithm = { kind: "sliding-window"; limit: number; windowMs: number };

export type AlgorithmPolicy = TokenBucketAlgorithm | SlidingWindowAlgorithm;

/** `tokens[i]` belongs to `bandwidths[i]`; fractional counts are partial refills. */
export type TokenBucketState = { kind: "token-bucket"; tokens: number[]; lastRefillMs: number };

/** Windows are aligned to multiples of `windowMs` since the epoch. */
export type SlidingWindowState = {
  kind: "sliding-window";
  windowStartMs: number;
  currentCount: number;
  previousCount: number;
};

export type LimiterState = TokenBucketState | SlidingWindowState;

export type Decision = {
  allowed: boolean;
  /** Further requests admissible right now, after this one. */
  remaining: number;
  /** 0 when allowed; otherwise whole ms (>= 1) until a request would be allowed. */
  retryAfterMs: number;
  /** Whole ms until the state equals a fresh one: a store may forget the key then without changing any decision. */
  resetAfterMs: number;
};

export type AlgorithmDecision<TState> = Decision & { nextState: TState };

// Float refill sums land a hair off whole numbers (599 refills of 1/600 token is not exactly 599/600).
// Counts this close to a whole number are taken as it: a billionth of a token is no leniency.
const TOLERANCE = 1e-9;

function snapToWhole(count: number): number {
  const whole = Math.round(count);
  return Math.abs(count - whole) <= TOLERANCE ? whole : count;
}

// Aims half the tolerance short of the deficit so that, after waiting the returned time, float error
// cannot leave the count just under the whole number the caller was told to expect.
function msToRefill(deficitTokens: number, msPerToken: number): number {
  return deficitTokens <= 0 ? 0 : Math.ceil((deficitTokens - TOLERANCE / 2) * msPerToken);
}

/**
 * What one request costs: 1 to spend a token, or -1 to give back one spent on a request that
 * turned out to be no attacker's (a right password, for a budget that counts failures only). A
 * refund is always "allowed" and never raises a count above its capacity.
 */
export type Cost = 1 | -1;

/** A step back of the wall clock this small is read strictly (the latest time seen); a larger one is rebased to now. */
export const CLOCK_STEP_SLACK_MS = 5_000;

export function consumeTokenBucket(
  state: TokenBucketState | undefined,
  nowMs: number,
  algorithm: TokenBucketAlgorithm,
  cost: Cost = 1,
): AlgorithmDecision<TokenBucketState> {
  const { bandwidths } = algorithm;
  if (bandwidths.length === 0) throw new Error("A token bucket needs at least one bandwidth");

  // A clock that steps back (NTP, or hosts with skew sharing one store) must not earn a second refill
  // for the same interval, so refill resumes from the latest time seen and waits count from there;
  // past CLOCK_STEP_SLACK_MS it resumes from now, with no refill for the step, so no wait grows by
  // the step's length (a 2-hour step held a limited pair for 7,379 s).
  const stepped = state !== undefined && state.lastRefillMs - nowMs > CLOCK_STEP_SLACK_MS;
  const refillFromMs = state && !stepped ? Math.max(state.lastRefillMs, nowMs) : nowMs;
  const elapsedMs = state && !stepped ? refillFromMs - state.lastRefillMs : 0;
  const waitOffsetMs = refillFromMs - nowMs;

  const refilled = bandwidths.map((bandwidth, i) => {
    // A bandwidth added by a configuration change starts full; a shrunk one is clamped.
    const previous = state?.tokens[i] ?? bandwidth.capacity;
    const gained = (elapsedMs * bandwidth.capacity) / bandwidth.periodMs;
    return snapToWhole(Math.min(bandwidth.capacity, previous + gained));
  });
  const allowed = cost < 0 || refilled.every((tokens) => tokens >= 1);
  const tokens = allowed ? refilled.map((count, i) => snapToWhole(Math.min(bandwidths[i]!.capacity, count - cost))) : refilled;

  const msPerToken = bandwidths.map((bandwidth) => bandwidth.periodMs / bandwidth.capacity);
  const retryMs = allowed ? 0 : Math.max(...tokens.map((count, i) => msToRefill(1 - count, msPerToken[i]!)));
  const fullMs = Math.max(...tokens.map((count, i) => msToRefill(bandwidths[i]!.capacity - count, msPerToken[i]!)));

  return {
    allowed,
    remaining: Math.max(0, Math.floor(Math.min(...tokens))),
    retryAfterMs: allowed ? 0 : waitOffsetMs + retryMs,
    resetAfterMs: fullMs === 0 ? 0 : waitOffsetMs + fullMs,
    nextState: { kind: "token-bucket", tokens, lastRefillMs: refillFromMs },
  };
}

export function consumeSlidingWindow(
  stored: SlidingWindowState | undefined,
  nowMs: number,
  algorithm: SlidingWindowAlgorithm,
  cost: Cost = 1,
): AlgorithmDecision<SlidingWindowState> {
  const { limit, windowMs } = algorithm;
  if (!(limit >= 1 && windowMs > 0)) throw new Error("A sliding window needs limit >= 1 and windowMs > 0");

  // If the clock steps back, stay at the start of the latest window seen: its previous count then
  // weighs fully, the strictest reading, and nothing already counted is forgotten. A step of more
  // than a window moves the counts to now's window instead, so no wait grows by the step's length.
  const seen =
    stored && stored.windowStartMs - nowMs > windowMs ? { ...stored, windowStartMs: Math.floor(nowMs / windowMs) * windowMs } : stored;
  const effectiveNowMs = seen ? Math.max(nowMs, seen.windowStartMs) : nowMs;
  const waitOffsetMs = effectiveNowMs - nowMs;
  const windowStartMs = Math.floor(effectiveNowMs / windowMs) * windowMs;
  const windowEndMs = windowStartMs + windowMs;

  let previousCount = 0;
  let currentCount = 0;
  if (seen?.windowStartMs === windowStartMs) {
    previousCount = seen.previousCount;
    currentCount = seen.currentCount;
  } else if (seen?.windowStartMs === windowStartMs - windowMs) {
    previousCount = seen.currentCount;
  }

  // A refund takes back a request of the current window (one of an earlier window has faded in part already).
  if (cost < 0) currentCount = Math.max(0, currentCount - 1);
  const weightedCount = (previousCount * (windowEndMs - effectiveNowMs)) / windowMs + currentCount;
  const allowed = cost < 0 || weightedCount + 1 <= limit + TOLERANCE;
  // Refused requests are not counted, like the token bucket: hammering does not extend the wait.
  if (allowed && cost > 0) currentCount += 1;

  let retryMs = 0;
  if (!allowed) {
    // Solve previous * (windowEnd - t) / windowMs + current + 1 = limit for the earliest t.
    const allowedAtMs =
      currentCount + 1 <= limit
        ? windowEndMs - ((limit - 1 - currentCount) * windowMs) / previousCount
        : windowEndMs + windowMs - ((limit - 1) * windowMs) / currentCount;
    retryMs = Math.max(1, Math.ceil(allowedAtMs - effectiveNowMs));
  }

  // The weighted count reaches 0 when the current window has become the previous one and passed too.
  const zeroAtMs = currentCount > 0 ? windowEndMs + windowMs : previousCount > 0 ? windowEndMs : effectiveNowMs;
  const weightedAfter = allowed && cost > 0 ? weightedCount + 1 : weightedCount;

  return {
    allowed,
    remaining: Math.max(0, Math.floor(limit - weightedAfter + TOLERANCE)),
    retryAfterMs: allowed ? 0 : waitOffsetMs + retryMs,
    resetAfterMs: zeroAtMs === effectiveNowMs ? 0 : waitOffsetMs + Math.ceil(zeroAtMs - effectiveNowMs),
    nextState: { kind: "sliding-window", windowStartMs, currentCount, previousCount },
  };
}

/**
 * Consumes one request for `policy` (or gives one back: `cost` -1). A state of another kind (the
 * policy's algorithm was changed) is ignored and the key starts fresh.
 */
export function decide(
  policy: AlgorithmPolicy,
  state: LimiterState | undefined,
  nowMs: number,
  cost: Cost = 1,
): AlgorithmDecision<LimiterState> {
  // A NaN or infinite time would be written into the state and poison every later decision.
  if (!Number.isFinite(nowMs)) throw new Error(`Rate limiter got a non-finite time: ${nowMs}`);
  switch (policy.kind) {
    case "token-bucket":
      return consumeTokenBucket(state?.kind === "token-bucket" ? state : undefined, nowMs, policy, cost);
    case "sliding-window":
      return consumeSlidingWindow(state?.kind === "sliding-window" ? state : undefined, nowMs, policy, cost);
  }
}

import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import { isBrokenCircuitError, TaskCancelledError } from "cockatiel";
import { readCappedText } from "@/lib/http/body";
import { createStoreGuard } from "@/lib/rate-limit/store-guard";

/**
 * Whether a password is in a breach corpus, asked without sending it anywhere: the k-anonymity
 * range format of Pwned Passwords. Only the first 5 hex digits of the password's SHA-1 leave the
 * process (one of 1,048,576 buckets, each shared by hundreds of leaked hashes); the answer lists
 * every suffix of that bucket and is searched here. `Add-Padding: true` makes every answer about
 * the same size (padding lines have count 0), so its length does not tell an observer of the
 * encrypted traffic which bucket was asked for.
 *
 * "unknown": the check is off, or the service did not answer well (slow, a 5xx, garbage, a
 * closed port). The caller then fails open: a corpus is a second opinion on top of the rules,
 * and no registration or sign-in may wait on, or fail with, a third party.
 */
export type BreachVerdict = "breached" | "not_found" | "unknown";

export type BreachedPasswords = {
  readonly enabled: boolean;
  check(password: string): Promise<BreachVerdict>;
};

export type BreachCheckOptions = {
  /** The service's base URL (`{url}/range/{prefix}`); empty: off. */
  url: string;
  /** Longest wait for one range, body included. */
  timeoutMs: number;
  /** How long a fetched range is kept (BREACHED_PASSWORDS_CACHE_SECONDS), on `clock`. */
  cacheMs: number;
  clock?: () => number;
  /**
   * A failure the caller should know of: the reason, never the password or its hash. It failed open,
   * except for "slow" (the answer came and was used, but counts toward the breaker).
   */
  onUnavailable(reason: string): void;
  /** Each verdict, for the metrics. */
  onVerdict(verdict: BreachVerdict | "skipped"): void;
  fetch?: typeof fetch;
};

const PREFIX_LENGTH = 5;
const LINE = /^([0-9A-F]{35}):(\d{1,12})$/;
// A real padded range is 30-40 kB; anything far larger is not one.
const MAX_RANGE_BYTES = 1_000_000;
// Breached suffixes only (padding is dropped), 35 bytes each: at most about 16 MB held.
const CACHE_MAX_SUFFIXES = 500_000;
const BREAKER_FAILURES = 3;
const BREAKER_HALF_OPEN_MS = 30_000;

export const breachChecksOff: BreachedPasswords = { enabled: false, check: async () => "unknown" };

/** The uppercase hex SHA-1 of the password's NFC form (the form that is hashed and stored). */
export function passwordSha1(password: string): string {
  return createHash("sha1").update(password.normalize("NFC"), "utf8").digest("hex").toUpperCase();
}

/** The breached suffixes of one range answer, or null when it is not one (garbage is no answer). */
export function parseRange(body: string): Set<string> | null {
  const breached = new Set<string>();
  let lines = 0;
  for (const raw of body.split("\n")) {
    const line = raw.trim();
    if (line === "") continue;
    const match = LINE.exec(line.toUpperCase());
    if (!match) return null;
    lines++;
    if (Number(match[2]) > 0) breached.add(match[1]!);
  }
  return lines > 0 ? breached : null;
}

class RangeUnavailable extends Error {}

/**
 * A range that came, but slower than half the timeout: used, and counted as a failure by the
 * breaker, so a service that answers just under its deadline cannot add it to every
 * registration and new-device sign-in for ever (issue 59).
 */
class SlowAnswer extends Error {
  constructor(readonly suffixes: Set<string>) {
    super("slow");
  }
}

/**
 * The range client: a cache of ranges by prefix (one request per prefix in flight), each call
 * bounded by `timeoutMs`, behind a circuit breaker so an outage costs one timeout per 30 s rather
 * than one per request.
 */
export function rangeBreachCheck(options: BreachCheckOptions): BreachedPasswords {
  const base = options.url.replace(/\/+$/, "");
  if (base === "") return breachChecksOff;
  const fetchRange = options.fetch ?? fetch;
  const ranges = new LRUCache<string, Set<string>>({
    maxSize: CACHE_MAX_SUFFIXES,
    sizeCalculation: (suffixes) => Math.max(1, suffixes.size),
    ttl: options.cacheMs,
    // Read the clock at each look-up (not once per tick), so an injected clock is believed.
    perf: { now: options.clock ?? Date.now },
    ttlResolution: 0,
  });
  const inFlight = new Map<string, Promise<Set<string>>>();
  const guard = createStoreGuard({
    timeoutMs: options.timeoutMs,
    breakerFailures: BREAKER_FAILURES,
    halfOpenAfterMs: BREAKER_HALF_OPEN_MS,
  });

  async function load(prefix: string, signal: AbortSignal): Promise<Set<string>> {
    const startedMs = performance.now();
    let suffixes: Set<string>;
    try {
      suffixes = await fetchAndParse(prefix, signal);
    } catch (error) {
      // The guard's deadline aborts the fetch, which then fails as any network error would: say which it was.
      throw signal.aborted ? new RangeUnavailable("timeout") : error;
    }
    if (performance.now() - startedMs > options.timeoutMs / 2) throw new SlowAnswer(suffixes);
    return suffixes;
  }

  async function fetchAndParse(prefix: string, signal: AbortSignal): Promise<Set<string>> {
    const response = await fetchRange(`${base}/range/${prefix}`, {
      headers: { "Add-Padding": "true", Accept: "text/plain" },
      signal,
      redirect: "error",
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => {});
      throw new RangeUnavailable(`status_${response.status}`);
    }
    const text = await readCappedText(response.body, MAX_RANGE_BYTES);
    if (text === null) throw new RangeUnavailable("too_large");
    const parsed = parseRange(text);
    if (!parsed) throw new RangeUnavailable("malformed");
    return parsed;
  }

  function range(prefix: string): Promise<Set<string>> {
    const cached = ranges.get(prefix);
    if (cached) return Promise.resolve(cached);
    let pending = inFlight.get(prefix);
    if (!pending) {
      pending = guard
        .execute((signal) => load(prefix, signal))
        .catch((error: unknown) => {
          if (!(error instanceof SlowAnswer)) throw error;
          options.onUnavailable("slow");
          return error.suffixes;
        })
        .then((suffixes) => {
          ranges.set(prefix, suffixes);
          return suffixes;
        })
        .finally(() => inFlight.delete(prefix));
      inFlight.set(prefix, pending);
    }
    return pending;
  }

  return {
    enabled: true,
    async check(password) {
      const digest = passwordSha1(password);
      try {
        const suffixes = await range(digest.slice(0, PREFIX_LENGTH));
        const verdict: BreachVerdict = suffixes.has(digest.slice(PREFIX_LENGTH)) ? "breached" : "not_found";
        options.onVerdict(verdict);
        return verdict;
      } catch (error) {
        if (isBrokenCircuitError(error)) {
          options.onVerdict("skipped");
          return "unknown";
        }
        const reason =
          error instanceof RangeUnavailable
            ? error.message
            : // cockatiel 3's isTaskCancelledError tests for the bulkhead's marker, so it never matches its own timeout.
              error instanceof TaskCancelledError || (error instanceof Error && error.name === "AbortError")
              ? "timeout"
              : "unreachable";
        options.onUnavailable(reason);
        options.onVerdict("unknown");
        return "unknown";
      }
    },
  };
}

import { LRUCache } from "lru-cache";
import { decide, type LimiterState } from "@/lib/rate-limit/algorithms";
import type { Policy } from "@/lib/rate-limit/policies";
import { keepForMs, scopedKey, type Decision, type RateLimitStore } from "@/lib/rate-limit/store";

export type MemoryStoreOptions = {
  /** Keys kept at most; the least recently used goes first. */
  maxEntries?: number;
  /** Whole ms since the epoch; must be the clock whose readings are passed to `consume`. */
  clock?: () => number;
};

const DEFAULT_MAX_ENTRIES = 100_000;

// lru-cache ignores a TTL whose start time is 0 and expires an entry only once age > ttl. Shifting its
// time base by 2 ms and backdating each write by 1 ms keeps starts non-zero for clocks that begin at 0
// and makes a key vanish at exactly nowMs + resetAfterMs.
const LRU_TIME_SHIFT_MS = 2;

/**
 * Limiter state for one process. `consume` runs synchronously inside, so on single-threaded JS it is
 * atomic. The bound on entries means an attacker spraying fresh keys can push out older ones (and
 * their counts); that is the price of bounded memory, and why several instances need a shared store.
 */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly kind = "memory" as const;
  readonly #entries: LRUCache<string, LimiterState>;

  constructor({ maxEntries = DEFAULT_MAX_ENTRIES, clock = Date.now }: MemoryStoreOptions = {}) {
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
      throw new Error(`MemoryRateLimitStore maxEntries must be a whole number >= 1, got ${maxEntries}`);
    }
    this.#entries = new LRUCache<string, LimiterState>({
      max: maxEntries,
      // No timer per key: stale entries are dropped when touched or pushed out by the LRU bound.
      ttlAutopurge: false,
      // Read the clock on every staleness check; the default caches it for 1 ms of real time,
      // which would hide a fake clock's jumps.
      ttlResolution: 0,
      perf: { now: () => clock() + LRU_TIME_SHIFT_MS },
    });
  }

  async consume(key: string, policy: Policy, nowMs: number): Promise<Decision> {
    const storageKey = scopedKey(policy.name, key);
    const { allowed, remaining, retryAfterMs, resetAfterMs, nextState } = decide(policy.algorithm, this.#entries.get(storageKey), nowMs);
    // The TTL is renewed on every write to when the state would be fresh again, so an idle key is
    // forgotten without changing any decision and an active one is never reset early.
    const ttlMs = keepForMs(resetAfterMs, policy);
    if (ttlMs > 0) {
      this.#entries.set(storageKey, nextState, { ttl: ttlMs, start: nowMs + LRU_TIME_SHIFT_MS - 1 });
    } else {
      this.#entries.delete(storageKey);
    }
    return { allowed, remaining, retryAfterMs, resetAfterMs };
  }

  /** Whether state for `key` under `policyName` is still remembered at the clock's current time. */
  has(policyName: string, key: string): boolean {
    return this.#entries.has(scopedKey(policyName, key));
  }

  /** Entries held, including expired ones not yet dropped. */
  get size(): number {
    return this.#entries.size;
  }
}

import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import { decide, type Cost, type LimiterState } from "@/lib/rate-limit/algorithms";
import type { Policies, Policy } from "@/lib/rate-limit/policies";
import { keepForMs, scopedKey, type Decision, type RateLimitStore } from "@/lib/rate-limit/store";

export type MemoryStoreOptions = {
  /** Keys kept at most; the least recently used goes first. */
  maxEntries?: number;
  /** Whole ms since the epoch; must be the clock whose readings are passed to `consume`. */
  clock?: () => number;
  /** The most bandwidths any policy's token bucket has (`bandwidthsNeeded(policies)`). */
  maxBandwidths?: number;
};

const DEFAULT_MAX_ENTRIES = 100_000;
const DEFAULT_MAX_BANDWIDTHS = 2;

// lru-cache ignores a TTL whose start time is 0 and expires an entry only once age > ttl. Shifting its
// time base by 2 ms and backdating each write by 1 ms keeps starts non-zero for clocks that begin at 0
// and makes a key vanish at exactly nowMs + resetAfterMs.
const LRU_TIME_SHIFT_MS = 2;

// A slot's first double says what it holds; a token bucket then holds its time, its count of
// tokens and the tokens, a sliding window its window's start and two counts.
const TOKEN_BUCKET = 1;
const SLIDING_WINDOW = 2;
const SLOT_HEADER = 3;

/** What a store for these policies must hold per key (the token bucket with the most bandwidths). */
export function bandwidthsNeeded(policies: Policies): number {
  return Math.max(
    1,
    ...Object.values(policies).map((policy) => (policy.algorithm.kind === "token-bucket" ? policy.algorithm.bandwidths.length : 0)),
  );
}

// A key's number: the policy's index in this store (6 bits) above 47 bits of a hash, so that keys of
// two policies never share an entry, and every id is an exact integer in a double (below 2^53).
const POLICY_BITS = 6;
const HASH_BITS = 47;
const MAX_POLICIES = 2 ** POLICY_BITS;

/**
 * 47 bits of SHA-256 of the policy-scoped key. Keys of one policy that share them share a counter,
 * the same bucket with the same settings, so each is stricter, never looser; with n keys of one
 * policy that happens with a chance of about n² / 2^48 (1 in 28,000 at 100,000 keys), and the keys
 * the limiter passes are HMACs under a server secret, so nobody can aim for it.
 */
function keyHash(policyName: string, key: string): number {
  return createHash("sha256").update(scopedKey(policyName, key)).digest().readUIntBE(0, 6) % 2 ** HASH_BITS;
}

/**
 * Limiter state for one process. `consume` runs synchronously inside, so on single-threaded JS it is
 * atomic. The bound on entries means an attacker spraying fresh keys can push out older ones (and
 * their counts); that is the price of bounded memory, and why several instances need a shared store.
 *
 * Compact, because a flood of fresh addresses fills it (issue 28): lru-cache keeps the order and
 * the expiry of numeric keys, and each key's state is a few doubles in one Float64Array allocated
 * up front, at the slot the cache holds as the key's value. A key then costs about 125 bytes of
 * heap (bench part 4) instead of about 355 for a string key and a state object, and the flood leaves
 * the garbage collector no objects to trace (docs/decisions/0014-packed-limiter-state.md).
 */
export class MemoryRateLimitStore implements RateLimitStore {
  readonly kind = "memory" as const;
  readonly #entries: LRUCache<number, number>;
  readonly #slotWidth: number;
  readonly #states: Float64Array;
  // Slots freed by expiry, eviction or deletion, then slots never used: one more than maxEntries,
  // so that a new key has a slot before the cache evicts the least recently used one to fit it.
  readonly #freeSlots: Uint32Array;
  #freeCount = 0;
  #neverUsed = 0;
  // Each policy's index, in the order this store first saw it.
  readonly #policyIndexes = new Map<string, number>();

  constructor({ maxEntries = DEFAULT_MAX_ENTRIES, clock = Date.now, maxBandwidths = DEFAULT_MAX_BANDWIDTHS }: MemoryStoreOptions = {}) {
    if (!Number.isSafeInteger(maxEntries) || maxEntries < 1) {
      throw new Error(`MemoryRateLimitStore maxEntries must be a whole number >= 1, got ${maxEntries}`);
    }
    if (!Number.isSafeInteger(maxBandwidths) || maxBandwidths < 1) {
      throw new Error(`MemoryRateLimitStore maxBandwidths must be a whole number >= 1, got ${maxBandwidths}`);
    }
    this.#slotWidth = SLOT_HEADER + maxBandwidths;
    this.#states = new Float64Array((maxEntries + 1) * this.#slotWidth);
    this.#freeSlots = new Uint32Array(maxEntries + 1);
    this.#entries = new LRUCache<number, number>({
      max: maxEntries,
      // No timer per key: stale entries are dropped when touched or pushed out by the LRU bound.
      ttlAutopurge: false,
      // Read the clock on every staleness check; the default caches it for 1 ms of real time,
      // which would hide a fake clock's jumps.
      ttlResolution: 0,
      perf: { now: () => clock() + LRU_TIME_SHIFT_MS },
      // Called synchronously whenever a key leaves (expired, evicted, deleted): its slot is free.
      dispose: (slot) => void (this.#freeSlots[this.#freeCount++] = slot),
    });
  }

  async consume(key: string, policy: Policy, nowMs: number, cost: Cost = 1): Promise<Decision> {
    const id = this.#keyId(policy.name, key);
    // A stale key is dropped here (its slot freed) and reads as absent.
    const slot = this.#entries.get(id);
    const state = slot === undefined ? undefined : this.#read(slot);
    const { allowed, remaining, retryAfterMs, resetAfterMs, nextState } = decide(policy.algorithm, state, nowMs, cost);
    // The TTL is renewed on every write to when the state would be fresh again, so an idle key is
    // forgotten without changing any decision and an active one is never reset early.
    const ttlMs = keepForMs(resetAfterMs, policy);
    if (ttlMs > 0) {
      this.#assertFits(nextState);
      const target = slot ?? this.#takeSlot();
      this.#write(target, nextState);
      this.#entries.set(id, target, { ttl: ttlMs, start: nowMs + LRU_TIME_SHIFT_MS - 1 });
    } else if (slot !== undefined) {
      this.#entries.delete(id);
    }
    return { allowed, remaining, retryAfterMs, resetAfterMs };
  }

  /** Whether state for `key` under `policyName` is still remembered at the clock's current time. */
  has(policyName: string, key: string): boolean {
    return this.#entries.has(this.#keyId(policyName, key));
  }

  #keyId(policyName: string, key: string): number {
    let index = this.#policyIndexes.get(policyName);
    if (index === undefined) {
      if (this.#policyIndexes.size === MAX_POLICIES) throw new Error(`MemoryRateLimitStore holds at most ${MAX_POLICIES} policies`);
      index = this.#policyIndexes.size;
      this.#policyIndexes.set(policyName, index);
    }
    return index * 2 ** HASH_BITS + keyHash(policyName, key);
  }

  /** Entries held, including expired ones not yet dropped. */
  get size(): number {
    return this.#entries.size;
  }

  #takeSlot(): number {
    if (this.#freeCount > 0) return this.#freeSlots[--this.#freeCount]!;
    // A slot is in use only while its key is in the cache, so maxEntries + 1 always suffice; past
    // them a write would fall outside the array and be lost without a word. (Like the width check,
    // an invariant's guard: the limiter would take the error for a store failure.)
    if (this.#neverUsed === this.#freeSlots.length) throw new Error("MemoryRateLimitStore has no free slot");
    return this.#neverUsed++;
  }

  #read(slot: number): LimiterState | undefined {
    const at = slot * this.#slotWidth;
    const s = this.#states;
    switch (s[at]) {
      case TOKEN_BUCKET:
        return {
          kind: "token-bucket",
          lastRefillMs: s[at + 1]!,
          tokens: Array.from(s.subarray(at + SLOT_HEADER, at + SLOT_HEADER + s[at + 2]!)),
        };
      case SLIDING_WINDOW:
        return { kind: "sliding-window", windowStartMs: s[at + 1]!, currentCount: s[at + 2]!, previousCount: s[at + 3]! };
      default:
        return undefined;
    }
  }

  // Before a slot is taken, so that a refused write leaves none in use.
  #assertFits(state: LimiterState): void {
    if (state.kind === "token-bucket" && state.tokens.length > this.#slotWidth - SLOT_HEADER) {
      throw new Error(
        `MemoryRateLimitStore holds ${this.#slotWidth - SLOT_HEADER} bandwidths per key; a policy has ${state.tokens.length}`,
      );
    }
  }

  #write(slot: number, state: LimiterState): void {
    const at = slot * this.#slotWidth;
    const s = this.#states;
    if (state.kind === "token-bucket") {
      s[at] = TOKEN_BUCKET;
      s[at + 1] = state.lastRefillMs;
      s[at + 2] = state.tokens.length;
      s.set(state.tokens, at + SLOT_HEADER);
    } else {
      s[at] = SLIDING_WINDOW;
      s[at + 1] = state.windowStartMs;
      s[at + 2] = state.currentCount;
      s[at + 3] = state.previousCount;
    }
  }
}

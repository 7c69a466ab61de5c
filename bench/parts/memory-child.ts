/**
 * Runs in its own process (started by memory.ts) so that its resident memory is the store's and
 * nothing else's. Prints one JSON line with the measurements.
 */
import { RateLimiterMemory } from "rate-limiter-flexible";
import { digestKey, RateLimiter } from "@/lib/rate-limit/limiter";
import { defaultPolicies } from "@/lib/rate-limit/policies";
import { MemoryRateLimitStore } from "@/lib/rate-limit/stores/memory";

export type MemoryChildInput = { mode: "gatehouse" | "flexible"; addresses: number; maxEntries: number; samples: number };

export type MemorySample = { addresses: number; entries: number; rssBytes: number; heapUsedBytes: number };

export type MemoryChildOutput = {
  baseline: MemorySample;
  samples: MemorySample[];
  elapsedMs: number;
  /** Gatehouse only: the drain check after the clock passes the refill time. */
  drain?: {
    checked: number;
    rememberedBefore: number;
    rememberedAfter: number;
    advancedMs: number;
    heldAfter: number;
    /** A second wave of as many fresh addresses as the bound, after the drain. */
    afterSecondWave: MemorySample;
  };
};

const SECRET = "bench-memory-secret-".padEnd(48, "x");

function address(n: number): string {
  const value = 0x0b000001 + n; // 11.0.0.1 onwards: a million distinct IPv4 addresses
  return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
}

function sample(addresses: number, entries: number): MemorySample {
  (globalThis as { gc?: () => void }).gc?.();
  const usage = process.memoryUsage();
  return { addresses, entries, rssBytes: usage.rss, heapUsedBytes: usage.heapUsed };
}

async function gatehouse(input: MemoryChildInput): Promise<MemoryChildOutput> {
  const baseline = sample(0, 0);
  // A fixed clock: every address arrives "at once", the worst case for how many are live.
  let clockMs = 1_800_000_000_000;
  const store = new MemoryRateLimitStore({ maxEntries: input.maxEntries, clock: () => clockMs });
  const limiter = new RateLimiter(store, defaultPolicies, SECRET, () => clockMs);
  const every = Math.max(1, Math.floor(input.addresses / input.samples));
  const samples: MemorySample[] = [];
  let longestResetMs = 0;
  let elapsedMs = 0;
  let startedMs = performance.now();
  for (let n = 0; n < input.addresses; n++) {
    // As the sign-in route does: the address limit, keyed by an HMAC digest of the address.
    const result = await limiter.consume("signInAddress", [address(n)]);
    longestResetMs = Math.max(longestResetMs, result.resetAfterMs);
    if ((n + 1) % every === 0) {
      // Sampling forces a full GC: kept out of the time per check.
      elapsedMs += performance.now() - startedMs;
      samples.push(sample(n + 1, store.size));
      startedMs = performance.now();
    }
  }

  // The addresses the LRU bound can still hold: the most recent ones.
  const recent = Array.from({ length: Math.min(input.maxEntries, input.addresses) }, (_, i) =>
    digestKey(SECRET, [address(input.addresses - 1 - i)]),
  );
  const remembered = () => recent.filter((key) => store.has("signInAddress", key)).length;
  const rememberedBefore = remembered();
  clockMs += longestResetMs;
  const rememberedAfter = remembered();
  const heldAfter = store.size;
  for (let n = input.addresses; n < input.addresses + input.maxEntries; n++) await limiter.consume("signInAddress", [address(n)]);
  const afterSecondWave = sample(input.addresses + input.maxEntries, store.size);
  return {
    baseline,
    samples,
    elapsedMs,
    drain: { checked: recent.length, rememberedBefore, rememberedAfter, advancedMs: longestResetMs, heldAfter, afterSecondWave },
  };
}

async function flexible(input: MemoryChildInput): Promise<MemoryChildOutput> {
  const baseline = sample(0, 0);
  const spec = defaultPolicies.signInAddress.algorithm;
  const bandwidth = spec.kind === "token-bucket" ? spec.bandwidths[0]! : { capacity: 30, periodMs: 900_000 };
  const limiter = new RateLimiterMemory({ points: bandwidth.capacity, duration: bandwidth.periodMs / 1000 });
  // Its map is private; read only to report how many entries it holds.
  const entries = () => (limiter as unknown as { _memoryStorage: { _storage: Map<string, unknown> } })._memoryStorage._storage.size;
  const every = Math.max(1, Math.floor(input.addresses / input.samples));
  const samples: MemorySample[] = [];
  let elapsedMs = 0;
  let startedMs = performance.now();
  for (let n = 0; n < input.addresses; n++) {
    // The same keys Gatehouse's store receives: HMAC digests of the address.
    await limiter.consume(digestKey(SECRET, [address(n)])).catch(() => undefined);
    if ((n + 1) % every === 0) {
      elapsedMs += performance.now() - startedMs;
      samples.push(sample(n + 1, entries()));
      startedMs = performance.now();
    }
  }
  return { baseline, samples, elapsedMs };
}

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2] ?? "{}") as MemoryChildInput;
  const output = input.mode === "flexible" ? await flexible(input) : await gatehouse(input);
  process.stdout.write(`${JSON.stringify(output)}\n`);
  // RateLimiterMemory leaves a timer per key; they are unref'd, but there is no reason to wait.
  process.exit(0);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});

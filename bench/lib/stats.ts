/** Small numeric and formatting helpers shared by the bench parts. */

export type Summary = { count: number; p50: number; p99: number; mean: number; min: number; max: number };

/** Nearest-rank percentile of already sorted values (p in 0..100). */
export function percentileOfSorted(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function summarize(values: ArrayLike<number>): Summary {
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count: sorted.length,
    p50: percentileOfSorted(sorted, 50),
    p99: percentileOfSorted(sorted, 99),
    mean: sorted.length === 0 ? Number.NaN : sum / sorted.length,
    min: sorted.length === 0 ? Number.NaN : sorted[0]!,
    max: sorted.length === 0 ? Number.NaN : sorted[sorted.length - 1]!,
  };
}

export function median(values: readonly number[]): number {
  return summarize(values).p50;
}

/** Deterministic PRNG (mulberry32): every contender sees the same key sequence. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

export const nowMs = (): number => performance.now();

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs `worker` over 0..count-1 with `parallel` at a time, stopping new work after `deadlineMs` (Date.now()); returns how many started. */
export async function pool(count: number, parallel: number, deadlineMs: number, worker: (index: number) => Promise<void>): Promise<number> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count && Date.now() < deadlineMs) await worker(next++);
    }),
  );
  return Math.min(next, count);
}

/** Runs the garbage collector when the bench was started with --expose-gc (npm run bench does). */
export function collectGarbage(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

const grouped = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

export const fmt = {
  int: (value: number): string => (Number.isFinite(value) ? grouped.format(Math.round(value)) : "n/a"),
  fixed: (value: number, digits = 2): string => (Number.isFinite(value) ? value.toFixed(digits) : "n/a"),
  /** Milliseconds with precision that suits the magnitude. */
  ms: (value: number): string =>
    !Number.isFinite(value)
      ? "n/a"
      : value >= 100
        ? `${value.toFixed(0)} ms`
        : value >= 10
          ? `${value.toFixed(1)} ms`
          : `${value.toFixed(2)} ms`,
  /** Microseconds from a millisecond value. */
  usFromMs: (valueMs: number): string =>
    !Number.isFinite(valueMs) ? "n/a" : valueMs >= 1 ? fmt.ms(valueMs) : `${(valueMs * 1000).toFixed(valueMs * 1000 >= 100 ? 0 : 2)} µs`,
  ratio: (value: number): string => (Number.isFinite(value) ? `${value >= 10 ? value.toFixed(0) : value.toFixed(2)}×` : "n/a"),
  mib: (bytes: number): string => (Number.isFinite(bytes) ? `${(bytes / 1_048_576).toFixed(1)} MiB` : "n/a"),
};

/** Over the rounds: "a" when every round gave the same (or there was one), else "min–max". */
export function range(values: readonly number[], format: (value: number) => string): string {
  const finite = values.filter(Number.isFinite);
  if (finite.length === 0) return "n/a";
  const [low, high] = [Math.min(...finite), Math.max(...finite)];
  return format(low) === format(high) ? format(low) : `${format(low)}–${format(high)}`;
}

/** A Markdown table; cells are written as given. */
export function table(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(headers), line(headers.map(() => "---")), ...rows.map(line)].join("\n");
}

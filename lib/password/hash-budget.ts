import { inSpan } from "@/lib/tracing/spans";
import { AsyncResource } from "node:async_hooks";

/** Known devices (the owner, most likely) and everyone else. */
export type Lane = "trusted" | "untrusted";

// Occupancy is remembered per second for this long: the proof of work follows the recent past.
const PRESSURE_WINDOW_SECONDS = 10;

/**
 * At most `concurrency` Argon2id operations at once (each holds 19 MiB and a core), with a short
 * queue per lane behind them. Past that, callers get their `whenFull()` answer at once (a 503)
 * instead of waiting in a line that grows without bound under a flood. A full budget returns
 * rather than throws: the budget is shared by every Next.js bundle, where a thrown error class
 * is not `instanceof` itself (docs/decisions/0006-results-not-exceptions.md).
 *
 * Two lanes, so a flood of untrusted attempts cannot push the owner out: trusted work starts
 * before any queued untrusted work, and `trustedSlots` slots are never given to untrusted work.
 */
export class HashBudget {
  private readonly running: Record<Lane, number> = { trusted: 0, untrusted: 0 };
  private readonly waiting: Record<Lane, (() => void)[]> = { trusted: [], untrusted: [] };
  /** Highest occupancy seen in each of the last seconds: [second, occupancy]. */
  private readonly peaks: [number, number][] = [];

  constructor(
    readonly concurrency: number,
    readonly queue: number,
    readonly trustedSlots = 0,
    private readonly clock: () => number = Date.now,
  ) {
    if (trustedSlots > 0 && trustedSlots >= concurrency) throw new RangeError("trustedSlots must be less than concurrency");
  }

  /** Known devices' checks running now (the door holds strangers meanwhile, lib/http/door.ts). */
  get trustedExecuting(): number {
    return this.running.trusted;
  }

  get executing(): number {
    return this.running.trusted + this.running.untrusted;
  }

  get queued(): number {
    return this.waiting.trusted.length + this.waiting.untrusted.length;
  }

  /** How full the budget has been over the last few seconds, from 0 (idle) to 1 (refusing). */
  recentPressure(): number {
    const second = Math.floor(this.clock() / 1000);
    let peak = this.occupancy();
    for (const [at, occupancy] of this.peaks) if (second - at < PRESSURE_WINDOW_SECONDS) peak = Math.max(peak, occupancy);
    return peak;
  }

  /** Runs `work` in a slot of `lane`, or answers `whenFull()` without running it. */
  async run<T, F>(work: () => Promise<T>, whenFull: () => F, lane: Lane = "untrusted"): Promise<T | F> {
    // A queued task is started by whichever request frees a slot, in that request's async
    // context; binding keeps it in its own, where next-auth reads cookies() and headers().
    const bound = AsyncResource.bind(work);
    const admitted = await inSpan(
      "hash budget wait",
      () => this.takeSlot(lane),
      (slot) => (slot ? lane : "full"),
    );
    if (!admitted) return whenFull();
    this.remember(this.occupancy());
    try {
      return await bound();
    } finally {
      this.running[lane]--;
      this.dispatch();
    }
  }

  /** A slot of `lane`, at once or after waiting in its queue; false when the queue is full. */
  private async takeSlot(lane: Lane): Promise<boolean> {
    if (this.waiting[lane].length === 0 && this.canStart(lane)) {
      this.running[lane]++;
      return true;
    }
    if (this.waiting[lane].length >= this.queue) {
      this.remember(1);
      return false;
    }
    // The slot is taken on our behalf by dispatch() before this resolves.
    await new Promise<void>((resolve) => this.waiting[lane].push(resolve));
    return true;
  }

  private canStart(lane: Lane): boolean {
    if (this.executing >= this.concurrency) return false;
    return lane === "trusted" || this.running.untrusted < this.concurrency - this.trustedSlots;
  }

  private dispatch() {
    for (const lane of ["trusted", "untrusted"] as const) {
      while (this.waiting[lane].length > 0 && this.canStart(lane)) {
        this.running[lane]++;
        this.waiting[lane].shift()!();
      }
    }
  }

  private occupancy(): number {
    return Math.min(1, (this.executing + this.queued) / (this.concurrency + this.queue));
  }

  private remember(occupancy: number) {
    const second = Math.floor(this.clock() / 1000);
    const last = this.peaks.at(-1);
    if (last && last[0] === second) last[1] = Math.max(last[1], occupancy);
    else this.peaks.push([second, occupancy]);
    if (this.peaks.length > PRESSURE_WINDOW_SECONDS) this.peaks.shift();
  }
}

/**
 * Whether the data this instance serves from is sound, for readiness. A database that answers
 * `SELECT 1` and takes a write can still fail every sign-in: a damaged index page (issue 59's
 * drill: a damaged live folder, readiness 200, 40 of 40 sign-ins 503). Nothing this process does
 * mends that, so a load balancer must stop sending it users: readiness turns 503, naming the
 * cause, from the moment a share of recent requests was answered `unavailable` for a damaged
 * page, until the process restarts (amcheck,
 * `npm run db:check`, names every damaged relation; it is not run on the live database, whose
 * every query would wait behind it). An outage that ends by itself (a database restarting, a full
 * disk freed) is not counted here: readiness already follows it, and it heals.
 */

import { errorChain } from "@/lib/log/error-chain";

/** SQLSTATE XX001 data corrupted, XX002 index corrupted. */
const DAMAGED_SQLSTATE = new Set(["XX001", "XX002"]);
// PostgreSQL's words for a page or an index it cannot trust (the codes may be lost on the way up).
const DAMAGED_MESSAGE =
  /invalid page in block|could not read block|index "[^"]*" contains (unexpected zero page|corrupted page)|right sibling's left-link doesn't match|could not access status of transaction|missing chunk number/i;

/** True when the error chain says the stored data is damaged (not that the database is away). */
export function isDataDamage(error: unknown): boolean {
  for (const item of errorChain(error)) {
    if ([item.code, item.originalCode].some((code) => typeof code === "string" && DAMAGED_SQLSTATE.has(code))) return true;
    if (typeof item.message === "string" && DAMAGED_MESSAGE.test(item.message)) return true;
  }
  return false;
}

export type DataReport = {
  ok: boolean;
  /** What makes the instance unfit: requests a damaged page failed. */
  cause?: "damaged_data_failing_requests";
  detail?: string;
  /** In the last window: requests answered, and those a damaged page failed. */
  answered: number;
  damaged: number;
};

export type DataHealthSettings = {
  /** How far back the share is taken. */
  windowMs: number;
  /** Damaged answers in the window before readiness turns (one unlucky request is not a verdict). */
  minDamaged: number;
  /** Share of the window's answers that a damaged page failed, from which readiness turns. */
  minShare: number;
};

export const DATA_HEALTH_DEFAULTS: DataHealthSettings = { windowMs: 60_000, minDamaged: 5, minShare: 0.2 };

const BUCKETS = 12;

/**
 * Counts, per bucket of a monotonic clock (a wall clock stepped back would keep old failures for
 * hours), the requests answered and those a damaged page failed.
 */
export class DataHealth {
  private readonly answeredIn = new Array<number>(BUCKETS).fill(0);
  private readonly damagedIn = new Array<number>(BUCKETS).fill(0);
  private readonly bucketOf = new Array<number>(BUCKETS).fill(-1);
  private lastDamage = "";
  private unfit = false;

  constructor(
    private readonly monotonicMs: () => number,
    private readonly settings: DataHealthSettings = DATA_HEALTH_DEFAULTS,
  ) {}

  /** A request a route answered, whatever its status. */
  answered(): void {
    this.answeredIn[this.slot()]! += 1;
  }

  /** A request answered `unavailable` because of `error`: counted when the data is damaged. */
  failed(error: unknown): void {
    if (!isDataDamage(error)) return;
    this.damagedIn[this.slot()]! += 1;
    this.lastDamage = describe(error);
    this.report();
  }

  report(): DataReport {
    const current = Math.floor(this.monotonicMs() / this.bucketMs());
    let answered = 0;
    let damaged = 0;
    for (let i = 0; i < BUCKETS; i++) {
      if (current - this.bucketOf[i]! >= BUCKETS) continue;
      answered += this.answeredIn[i]!;
      damaged += this.damagedIn[i]!;
    }
    // For good once reached: with readiness 503 the balancer sends no more requests, and the
    // failures aging out of the window would bring the instance back to fail them again.
    this.unfit ||= damaged >= this.settings.minDamaged && damaged >= this.settings.minShare * Math.max(answered, 1);
    if (this.unfit) return { ok: false, cause: "damaged_data_failing_requests", detail: this.lastDamage, answered, damaged };
    return { ok: true, answered, damaged };
  }

  private bucketMs(): number {
    return Math.max(1, Math.ceil(this.settings.windowMs / BUCKETS));
  }

  /** The current bucket, emptied when it last held an older period. */
  private slot(): number {
    const bucket = Math.floor(this.monotonicMs() / this.bucketMs());
    const index = bucket % BUCKETS;
    if (this.bucketOf[index] !== bucket) {
      this.bucketOf[index] = bucket;
      this.answeredIn[index] = 0;
      this.damagedIn[index] = 0;
    }
    return index;
  }
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split("\n").find((text) => DAMAGED_MESSAGE.test(text)) ?? message.split("\n").find((text) => text.trim() !== "");
  return (line ?? "").trim().slice(0, 200);
}

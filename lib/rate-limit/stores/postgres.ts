import { setTimeout as delay } from "node:timers/promises";
import { deleteExpired } from "@/lib/db/expired-rows";
import { utcTimestamp } from "@/lib/db/sql-time";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { startPeriodic } from "@/lib/jobs/jobs";
import { decide, type Cost, type LimiterState } from "@/lib/rate-limit/algorithms";
import type { Policy } from "@/lib/rate-limit/policies";
import { keepForMs, scopedKey, type Decision, type RateLimitStore } from "@/lib/rate-limit/store";

export type PostgresStoreOptions = {
  /** Re-reads after a lost version race before giving up with an error (the policy's fail mode then decides). */
  maxRetries?: number;
  /** How often expired buckets are deleted. */
  cleanupIntervalMs?: number;
  /** A failed clean-up only leaves stale rows behind, so callers log it at warn, not error. */
  onCleanupError?: (error: unknown) => void;
  /**
   * "database" (always, in the app): decisions use the database's clock, the one every instance
   * shares. "caller": they use the `nowMs` passed in, so tests can run the shared decision table.
   */
  clock?: "database" | "caller";
  /** Consumes of one key waiting in this instance's queue beyond which the next is refused at once. */
  maxQueuedPerKey?: number;
  /**
   * Runs each consume's database work once its turn in the key's queue has come. The app passes
   * the policy's guard here, so the guard's timeout bounds the database's answer, not the wait
   * behind this instance's own earlier consumes of the key: counted from the enqueue, a burst the
   * local count admitted would time out in the queue on a busy machine and open the circuit. The
   * signal, once aborted (the guard gave up), stops the work's retries.
   */
  guardEach?: (policy: Policy, work: (signal?: AbortSignal) => Promise<Decision>) => Promise<Decision>;
  /**
   * Longest wait for a turn in the key's queue: a consume still waiting then is refused, as a full
   * queue's is, even if the statement ahead of it never ends, and never counts against the guard.
   * The app passes the store's timeout, so a caller waits at most about twice that.
   */
  maxQueueWaitMs?: number;
};

export const DEFAULT_MAX_QUEUED_PER_KEY = 32;
export const DEFAULT_MAX_QUEUE_WAIT_MS = 1_000;
// What a caller refused for a full queue is told: the queue drains within a few round trips.
const QUEUE_FULL_RETRY_MS = 1_000;

export type PostgresRateLimitStore = RateLimitStore & {
  /** Stops the clean-up timer and waits for a clean-up in progress; the Prisma client stays open. */
  close(): Promise<void>;
  /** Deletes expired RateLimitBucket rows; returns how many. */
  cleanupExpired(): Promise<number>;
};

export const DEFAULT_MAX_RETRIES = 5;
export const DEFAULT_CLEANUP_INTERVAL_MS = 60_000;
const RETRY_BACKOFF_BASE_MS = 2;
const RETRY_BACKOFF_MAX_MS = 50;
// setInterval treats anything longer as 1 ms.
const MAX_TIMER_MS = 2 ** 31 - 1;

type BucketRow = {
  state: LimiterState | null;
  version: number | null;
  // extract(epoch) of a timestamp without time zone ignores the session's TimeZone: UTC in, UTC out.
  expiresAtMs: bigint | null;
  nowMs: bigint;
};

function checkOptions(maxRetries: number, cleanupIntervalMs: number, maxQueuedPerKey: number, maxQueueWaitMs: number): void {
  if (!Number.isSafeInteger(maxQueueWaitMs) || maxQueueWaitMs < 1) {
    throw new Error(`PostgreSQL rate-limit store: maxQueueWaitMs must be a whole number >= 1, got ${maxQueueWaitMs}`);
  }
  if (!Number.isSafeInteger(maxQueuedPerKey) || maxQueuedPerKey < 1) {
    throw new Error(`PostgreSQL rate-limit store: maxQueuedPerKey must be a whole number >= 1, got ${maxQueuedPerKey}`);
  }
  if (!Number.isSafeInteger(maxRetries) || maxRetries < 0) {
    throw new Error(`PostgreSQL rate-limit store: maxRetries must be a whole number >= 0, got ${maxRetries}`);
  }
  if (!Number.isSafeInteger(cleanupIntervalMs) || cleanupIntervalMs < 1 || cleanupIntervalMs > MAX_TIMER_MS) {
    throw new Error(
      `PostgreSQL rate-limit store: cleanupIntervalMs must be a whole number from 1 to ${MAX_TIMER_MS}, got ${cleanupIntervalMs}`,
    );
  }
}

/**
 * Limiter state in the RateLimitBucket table, shared by every instance. Each consume reads the row
 * and the database clock in one query, decides in TypeScript (algorithms.ts), then writes only if
 * the row is still the version it read; a lost race re-reads and decides again, up to `maxRetries`.
 *
 * `nowMs` is ignored: instances whose clocks disagree would otherwise refill a shared bucket from
 * each other's timestamps, so every decision uses the one clock they all share, the database's.
 *
 * A refusal writes nothing: it consumes nothing, and the stored state already implies the refill.
 * So a key being hammered after it is empty costs one read per request and causes no write
 * conflicts: each lost race means another request was admitted.
 *
 * Within one instance, consumes of the same key run one after another. Racing each other they
 * would mostly lose (measured: of 200 parallel requests on a 20-token key, about 190 ran out of retries
 * and errored, which a fail-open policy turns into admissions), and one hot key would take every pooled
 * connection. Queued, a key races only the other instances and holds at most one connection here:
 * a call its guard gave up on still holds the key until its statement ends, and retries no more.
 */
export function createPostgresRateLimitStore(prisma: PrismaClient, options: PostgresStoreOptions = {}): PostgresRateLimitStore {
  const {
    maxRetries = DEFAULT_MAX_RETRIES,
    cleanupIntervalMs = DEFAULT_CLEANUP_INTERVAL_MS,
    onCleanupError = () => {},
    maxQueuedPerKey = DEFAULT_MAX_QUEUED_PER_KEY,
    clock = "database",
    guardEach = (_policy, work) => work(),
    maxQueueWaitMs = DEFAULT_MAX_QUEUE_WAIT_MS,
  } = options;
  checkOptions(maxRetries, cleanupIntervalMs, maxQueuedPerKey, maxQueueWaitMs);

  // Per key, the end of the last queued consume's database work and how many wait; removed once
  // the queue drains, so it holds only keys in flight.
  const queues = new Map<string, { tail: Promise<void>; waiting: number }>();
  const refusedInLine = (): Decision => ({
    allowed: false,
    remaining: 0,
    retryAfterMs: QUEUE_FULL_RETRY_MS,
    resetAfterMs: QUEUE_FULL_RETRY_MS,
  });

  /**
   * Runs `work` through the guard once every earlier consume of the key has ended: ended in the
   * database, not when its guard gave up on it, so one key never has two consumes in flight here.
   */
  function queued(storageKey: string, policy: Policy, work: (signal?: AbortSignal) => Promise<Decision>): Promise<Decision> {
    const queue = queues.get(storageKey) ?? { tail: Promise.resolve(), waiting: 0 };
    // A key this hot is being flooded: refusing now costs nothing.
    if (queue.waiting >= maxQueuedPerKey) return Promise.resolve(refusedInLine());
    queue.waiting += 1;
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const turn = queue.tail;
    queue.tail = done;
    queues.set(storageKey, queue);
    void done.then(() => {
      queue.waiting -= 1;
      if (queue.tail === done) queues.delete(storageKey);
    });
    const enqueuedMs = performance.now();
    // The turn comes when the earlier consume's statement ends, which its guard does not hasten:
    // behind a statement that never ends (a stalled database, a half-open connection) it would
    // never come. So the wait has a timer of its own; a caller it answered passes its turn on.
    let answered = false;
    return new Promise<Decision>((resolve, reject) => {
      // Nobody ahead (the usual case): the turn comes at once, and no timer is needed.
      const waitTimer =
        queue.waiting > 1
          ? setTimeout(() => {
              answered = true;
              resolve(refusedInLine());
            }, maxQueueWaitMs)
          : undefined;
      void turn.then(() => {
        clearTimeout(waitTimer);
        // Too late to be useful: the caller has waited its share; a refusal is not a store failure.
        if (answered || performance.now() - enqueuedMs > maxQueueWaitMs) {
          release();
          resolve(refusedInLine());
          return;
        }
        let started = false;
        // A guard that throws at once settles the caller too, and never strands the key's queue.
        const answer = Promise.resolve().then(() =>
          guardEach(policy, (signal) => {
            started = true;
            const running = work(signal);
            void running.then(release, release);
            return running;
          }),
        );
        // Refused without running (an open circuit): the next one's turn comes now.
        void answer.then(
          () => started || release(),
          () => started || release(),
        );
        answer.then(resolve, reject);
      });
    });
  }

  async function consume(storageKey: string, policy: Policy, callerNowMs: number, cost: Cost, signal?: AbortSignal): Promise<Decision> {
    for (let attempt = 0; attempt <= maxRetries; attempt++) {
      // The guard gave up on this call: a retry would only hold the key's queue longer.
      if (attempt > 0 && signal?.aborted) throw new Error(`PostgreSQL rate-limit store: "${policy.name}" abandoned by its guard`);
      const [row] = await prisma.$queryRaw<BucketRow[]>`
        SELECT b."state", b."version", (extract(epoch FROM b."expiresAt") * 1000)::bigint AS "expiresAtMs", t."nowMs"
        FROM (SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS "nowMs") t
        LEFT JOIN "RateLimitBucket" b ON b."key" = ${storageKey}`;
      if (!row) throw new Error("PostgreSQL rate-limit store: the clock query returned no row");
      const nowMs = clock === "caller" ? callerNowMs : Number(row.nowMs);
      const exists = row.version !== null && row.expiresAtMs !== null;
      const readExpiresAtMs = Number(row.expiresAtMs);
      // Past its expiry a state equals a fresh one (resetAfterMs), so the row counts as absent.
      const state = exists && readExpiresAtMs > nowMs ? (row.state ?? undefined) : undefined;

      const { nextState, ...decision } = decide(policy.algorithm, state, nowMs, cost);
      if (!decision.allowed) return decision;

      const stateJson = JSON.stringify(nextState);
      const expiresAt = utcTimestamp(nowMs + keepForMs(decision.resetAfterMs, policy));
      // The expiry in the condition guards against ABA: after a clean-up deletes the row, a new one
      // starts again at version 0, but always with a later expiry than the deleted one had.
      const written = exists
        ? await prisma.$executeRaw`
            UPDATE "RateLimitBucket" SET "state" = ${stateJson}::jsonb, "version" = "version" + 1, "expiresAt" = ${expiresAt}
            WHERE "key" = ${storageKey} AND "version" = ${row.version} AND "expiresAt" = ${utcTimestamp(readExpiresAtMs)}`
        : await prisma.$executeRaw`
            INSERT INTO "RateLimitBucket" ("key", "state", "version", "expiresAt")
            VALUES (${storageKey}, ${stateJson}::jsonb, 0, ${expiresAt})
            ON CONFLICT ("key") DO NOTHING`;
      if (written === 1) return decision;
      // Re-reading at once can lose to the same instance again (PGlite's one connection even makes
      // the order fixed); a short random wait, doubling per loss, breaks the pattern.
      if (attempt < maxRetries) await delay(Math.random() * Math.min(RETRY_BACKOFF_MAX_MS, RETRY_BACKOFF_BASE_MS * 2 ** attempt));
    }
    throw new Error(`PostgreSQL rate-limit store: "${policy.name}" bucket still contended after ${maxRetries + 1} attempts`);
  }

  const cleanupExpired = () => deleteExpired(prisma, "RateLimitBucket");

  const cleanup = startPeriodic(async () => void (await cleanupExpired()), { intervalMs: cleanupIntervalMs, onError: onCleanupError });

  return {
    kind: "postgres",
    async consume(key, policy, nowMs, cost = 1) {
      const storageKey = scopedKey(policy.name, key);
      return queued(storageKey, policy, (signal) => consume(storageKey, policy, nowMs, cost, signal));
    },
    cleanupExpired,
    close: () => cleanup.stop(),
  };
}

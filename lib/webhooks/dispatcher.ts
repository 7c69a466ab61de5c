import { Webhook } from "standardwebhooks";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { startPeriodic } from "@/lib/jobs/jobs";
import type { Logger } from "@/lib/log/logger";
import type { Metrics } from "@/lib/log/metrics";
import { messageOf } from "@/lib/log/message";

export type WebhookSettings = { url: string; secret: string };

/** One attempt's deadline, from the request's start to the receiver's status line. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** After this many failed attempts (about two days of backoff) an event is dropped, logged at error level. */
export const MAX_ATTEMPTS = 12;
/**
 * A claimed row is this process's for this long: twice what a batch's attempts can take (3 rounds
 * of 10 s). A process killed mid-attempt delays those events by this much at most.
 */
const CLAIM_LEASE_MS = 60_000;
const BATCH = 10;
const CONCURRENCY = 4;

/**
 * The wait after the n-th failed attempt: 5 s × 4^(n-1), at most 6 hours, less up to a fifth at
 * random so that many instances retrying one dead receiver do not come back together (5 s, 20 s,
 * 80 s, 5 min, 21 min, 85 min, 5.7 h, then 6 h).
 */
export function retryDelayMs(failedAttempts: number, random: () => number = Math.random): number {
  const base = Math.min(5_000 * 4 ** Math.max(failedAttempts - 1, 0), 6 * 3_600_000);
  return Math.round(base * (1 - random() / 5));
}

export type AttemptResult = { delivered: true; status: number } | { delivered: false; reason: string };

/**
 * One signed POST (Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature). A 2xx
 * is delivered; a redirect is not followed (the receiver is the URL configured, nowhere else) and
 * counts as a failure, as does any other status, a connection error or the deadline. The answer's
 * body is never read, whatever its size: the status is the whole answer.
 */
export async function attemptDelivery(
  settings: WebhookSettings,
  id: string,
  body: string,
  nowMs: number,
  options: { timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<AttemptResult> {
  const signature = new Webhook(settings.secret).sign(id, new Date(nowMs), body);
  const abort = new AbortController();
  // A timer held here, not AbortSignal.timeout (see lib/mail/mailer.ts: Node 20 may collect it early).
  const deadline = setTimeout(() => abort.abort(new Error("timed out")), options.timeoutMs ?? ATTEMPT_TIMEOUT_MS);
  const stop = () => abort.abort(new Error("shutting down"));
  options.signal?.addEventListener("abort", stop, { once: true });
  try {
    const response = await fetch(settings.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "Gatehouse-Webhooks/1",
        "webhook-id": id,
        "webhook-timestamp": String(Math.floor(nowMs / 1000)),
        "webhook-signature": signature,
      },
      body,
      redirect: "manual",
      signal: abort.signal,
    });
    await response.body?.cancel().catch(() => {});
    if (response.status >= 200 && response.status < 300) return { delivered: true, status: response.status };
    return {
      delivered: false,
      reason: response.status >= 300 && response.status < 400 ? `redirect ${response.status} (not followed)` : `status ${response.status}`,
    };
  } catch (error) {
    return { delivered: false, reason: abort.signal.aborted ? messageOf(abort.signal.reason) : messageOf(error) };
  } finally {
    clearTimeout(deadline);
    options.signal?.removeEventListener("abort", stop);
  }
}

type Row = { id: string; payload: string; attempts: number };

export type WebhookDispatcher = {
  /** One pass: claims what is due, attempts each, and settles it (tests call it directly). */
  runOnce(): Promise<void>;
  /** Stops polling and cuts attempts in flight short (they are retried by the next start). */
  stop(): Promise<void>;
};

/**
 * Delivers the outbox (lib/webhooks/events.ts writes it) every `pollMs`: at least once, each
 * event under its stable webhook-id, retried with backoff. It runs beside the requests, never in
 * them: a dead receiver only grows the backlog (gatehouse_webhook_backlog, alerted on).
 */
export function startWebhookDispatcher(
  deps: { prisma: PrismaClient; settings: WebhookSettings; clock: () => number; log: Logger; metrics?: Metrics },
  options: { pollMs?: number; timeoutMs?: number; random?: () => number } = {},
): WebhookDispatcher {
  const { prisma, settings, clock, log, metrics } = deps;
  const stopping = new AbortController();

  async function claim(): Promise<Row[]> {
    const now = new Date(clock());
    // One statement: rows are claimed atomically, and SKIP LOCKED lets two instances share them.
    return prisma.$queryRaw<Row[]>`
      UPDATE "WebhookOutbox" SET "claimedUntil" = ${new Date(clock() + CLAIM_LEASE_MS)}
       WHERE "id" IN (
         SELECT "id" FROM "WebhookOutbox"
          WHERE "nextAttemptAt" <= ${now} AND ("claimedUntil" IS NULL OR "claimedUntil" < ${now})
          ORDER BY "createdAt" LIMIT ${BATCH} FOR UPDATE SKIP LOCKED)
      RETURNING "id", "payload", "attempts"`;
  }

  async function settle(row: Row, result: AttemptResult): Promise<void> {
    const attempts = row.attempts + 1;
    const type = (JSON.parse(row.payload) as { type?: string }).type ?? "unknown";
    if (result.delivered) {
      await prisma.webhookOutbox.deleteMany({ where: { id: row.id } });
      metrics?.webhookDeliveries.inc({ outcome: "delivered" });
      log.info({ event: "webhook_delivered", id: row.id, type, attempt: attempts, status: result.status });
    } else if (attempts >= MAX_ATTEMPTS) {
      await prisma.webhookOutbox.deleteMany({ where: { id: row.id } });
      metrics?.webhookDeliveries.inc({ outcome: "dropped" });
      log.error({ event: "webhook_dropped", id: row.id, type, attempts, reason: result.reason });
    } else {
      const delayMs = retryDelayMs(attempts, options.random);
      await prisma.webhookOutbox.updateMany({
        where: { id: row.id },
        data: { attempts, nextAttemptAt: new Date(clock() + delayMs), claimedUntil: null },
      });
      metrics?.webhookDeliveries.inc({ outcome: "failed" });
      log.warn({ event: "webhook_failed", id: row.id, type, attempt: attempts, reason: result.reason, retryInMs: delayMs });
    }
  }

  async function measure(): Promise<void> {
    if (!metrics) return;
    const [backlog] = await prisma.$queryRaw<{ count: bigint; oldest: Date | null }[]>`
      SELECT count(*) AS "count", min("createdAt") AS "oldest" FROM "WebhookOutbox"`;
    metrics.webhookBacklog.set(Number(backlog?.count ?? 0));
    metrics.webhookOldestSeconds.set(backlog?.oldest ? Math.max(0, (clock() - backlog.oldest.getTime()) / 1000) : 0);
  }

  async function pass(): Promise<void> {
    for (;;) {
      const rows = await claim();
      const queue = [...rows];
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          for (let row = queue.shift(); row; row = queue.shift()) {
            if (stopping.signal.aborted) return;
            const result = await attemptDelivery(settings, row.id, row.payload, clock(), {
              timeoutMs: options.timeoutMs,
              signal: stopping.signal,
            });
            await settle(row, result);
          }
        }),
      );
      if (stopping.signal.aborted) {
        // Handed back at once, for the next start, rather than held until the lease runs out.
        if (queue.length > 0)
          await prisma.webhookOutbox.updateMany({ where: { id: { in: queue.map((row) => row.id) } }, data: { claimedUntil: null } });
        break;
      }
      if (rows.length < BATCH) break;
    }
    await measure();
  }

  // One pass at a time in this process: a pass asked for while the timer's runs after it, so that
  // when runOnce resolves, everything claimed before it was settled (claims already keep two
  // instances apart).
  let passes: Promise<void> = Promise.resolve();
  const runOnce = (): Promise<void> => (passes = passes.catch(() => {}).then(pass));

  const periodic = startPeriodic(runOnce, {
    intervalMs: options.pollMs ?? 5_000,
    firstAfterMs: 0,
    onError: (error) => log.warn({ event: "webhook_dispatch_failed", err: messageOf(error) }),
  });
  return {
    runOnce,
    async stop() {
      stopping.abort();
      await periodic.stop();
    },
  };
}

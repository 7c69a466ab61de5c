import { randomBytes, randomUUID } from "node:crypto";
import nodemailer from "nodemailer";
import type { AppConfig } from "@/lib/config/env";
import { writeOutboxMessage } from "./outbox";
import type { MailMessage, Mailer } from "./types";

export type MailerOptions = {
  /**
   * smtps:// (TLS from the first byte, usually port 465) or smtp:// (STARTTLS when the server
   * offers it; `?requireTLS=true` refuses to send without it). Credentials go in the URL
   * (`smtps://user:pass@host`); other nodemailer options may follow as `?name=value`.
   * Unset: messages are written to `outboxDir` instead.
   */
  smtpUrl?: string;
  /** The From header, e.g. `Gatehouse <no-reply@example.com>`. */
  from: string;
  outboxDir: string;
  /** Messages held at most (waiting, being sent, or waiting to retry); past it, new ones are dropped. */
  queueMax: number;
  /** Attempts per message, the first included. */
  maxAttempts: number;
  retryBaseMs: number;
  /** The longest wait between two attempts (default 5 minutes). */
  retryMaxMs?: number;
  /** One attempt's deadline: connection, TLS, the whole SMTP exchange. */
  sendTimeoutMs: number;
  /** Deliveries at once (default 2): enough to drain a burst, few enough not to look like a flood to the relay. */
  concurrency?: number;
};

/** The options that lib/config/env.ts validated (every default lives there). */
export function mailerOptions(config: Pick<AppConfig, "mail">): MailerOptions {
  return {
    smtpUrl: config.mail.smtpUrl,
    from: config.mail.from,
    outboxDir: config.mail.outboxDir,
    queueMax: config.mail.queueMax,
    maxAttempts: config.mail.maxAttempts,
    retryBaseMs: config.mail.retryBaseMs,
    sendTimeoutMs: config.mail.sendTimeoutMs,
  };
}

/**
 * What a start says when mail only reaches the outbox folder (no SMTP_URL), or null when that is
 * fine (tests): in production an error (links sit in files and reach nobody); on `npm run dev`,
 * where the outbox is the plan (/dev/outbox shows it), only information.
 */
export function outboxOnlyNotice(
  config: Pick<AppConfig, "nodeEnv" | "devServer" | "mail">,
): { level: "info" | "error"; entry: { event: "mail_to_outbox_only"; outboxDir: string; hint: string } } | null {
  if (config.mail.smtpUrl || (config.nodeEnv !== "production" && !config.devServer)) return null;
  if (config.devServer) {
    return {
      level: "info",
      entry: { event: "mail_to_outbox_only", outboxDir: config.mail.outboxDir, hint: "read the mail at /dev/outbox" },
    };
  }
  const hint = "set SMTP_URL so verification, reset and unlock emails reach people";
  return { level: "error", entry: { event: "mail_to_outbox_only", outboxDir: config.mail.outboxDir, hint } };
}

/** pino's Logger fits; each entry is one structured event. */
export type MailLogger = { info(entry: object): void; warn(entry: object): void; error(entry: object): void };

export type MailOutcome = "sent" | "failed" | "dropped";

/** The part of lib/log that the mailer feeds (Metrics fits). */
export type MailMetrics = {
  mailQueueDepth: { set(value: number): void };
  mailSent: { inc(labels: { kind: string; outcome: MailOutcome }): void };
};

/** A message that waited for the relay when the last process stopped, and the attempts it has had. */
export type SpooledMail = { id: string; message: MailMessage; attempts: number };

/**
 * What a request promised to mail, written before its answer and before the message exists
 * (lib/recovery renders it after the answer): a process killed in between leaves the promise
 * to whichever instance takes the row over, which keeps it by calling `onIntent`.
 */
export type HeldIntent = { id: string; intent: unknown; attempts: number };

/**
 * Where undelivered mail waits across a restart (lib/mail/spool.ts keeps it in the database).
 * claim() leases rows to this process, so two instances never both send one message.
 */
export type MailSpool = {
  save(mail: SpooledMail[]): Promise<void>;
  /** Rows whose lease ran out (or that nobody holds): messages to send, or promises to keep. */
  claim(limit: number): Promise<(SpooledMail | HeldIntent)[]>;
  /** A promise of mail, leased to this process from now. */
  hold(id: string, kind: string, intent: unknown): Promise<void>;
  /** The promise became this message: a takeover sends it as it is (same Message-ID) instead of keeping the promise again. */
  rendered(id: string, message: MailMessage): Promise<void>;
  /** Rows this process holds and will not work on (a clean stop): any instance may take them now. */
  handBack(ids: string[]): Promise<void>;
  /**
   * A spooled message is about to be tried for the `attempts`-th time: the count is written
   * before the attempt, so a process killed while the relay is silent still counts it, and a
   * relay that acknowledges late gets at most `maxAttempts` copies however often it is taken over.
   * Its lease runs again from now.
   */
  retrying(id: string, attempts: number): Promise<void>;
  /**
   * The rows this process still holds (waiting their turn, backing off, being sent): their lease
   * runs again from now. The mailer calls it every `renewEveryMs` while it holds any, since a
   * long queue behind a slow relay can outlast one lease without a failed attempt of its own.
   */
  renew(ids: string[]): Promise<void>;
  readonly renewEveryMs: number;
  /** How often a running instance looks for rows whose lease ran out (a killed process's). */
  readonly takeOverEveryMs: number;
  /** The relay took it, or it failed its last attempt: the row goes, so no start sends it again. */
  settled(id: string): Promise<void>;
};

export type MailerDeps = {
  log: MailLogger;
  /** Without one, what close() cannot deliver is lost (and logged). */
  spool?: MailSpool;
  metrics?: MailMetrics;
  /** Outbox file names and sentAt; default Date.now. */
  clock?: () => number;
  /** Jitter in [0, 1); default Math.random. */
  random?: () => number;
  /** Keeps a promise of mail taken over from another process (lib/recovery renders it, then calls send or release with its id). */
  onIntent?: (id: string, intent: unknown) => void;
};

export const RETRY_MAX_MS = 5 * 60_000;

/**
 * The wait after the `failedAttempts`-th failure: base·2^(n−1), at most `retryMaxMs`, less up
 * to 10 % so that instances coming back from the same outage do not retry in step.
 */
export function retryDelayMs(failedAttempts: number, policy: { retryBaseMs: number; retryMaxMs: number }, random: number): number {
  const exponentialMs = Math.min(policy.retryMaxMs, policy.retryBaseMs * 2 ** Math.max(0, failedAttempts - 1));
  return Math.round(exponentialMs * (1 - 0.1 * random));
}

/**
 * What may be logged of a delivery error: its codes and a message with every address and URL
 * cut out, since SMTP replies often echo the recipient ("550 <bob@example.com>: no such user").
 */
export function describeMailError(error: unknown): { code?: string; responseCode?: number; command?: string; message: string } {
  const { code, responseCode, command, message } = (error ?? {}) as {
    code?: unknown;
    responseCode?: unknown;
    command?: unknown;
    message?: unknown;
  };
  return {
    ...(typeof code === "string" ? { code } : {}),
    ...(typeof responseCode === "number" ? { responseCode } : {}),
    // RCPT TO and MAIL FROM carry addresses as arguments: keep only the verb.
    ...(typeof command === "string" ? { command: command.replace(/:.*$/s, "").slice(0, 20) } : {}),
    message: String(message ?? error)
      .replace(/[a-z][a-z0-9+.-]*:\/\/\S+/gi, "[url]")
      .replace(/\S+@\S+/g, "[address]")
      .slice(0, 200),
  };
}

/**
 * `id` is the message's for good: its spool row's key and its Message-ID, the same on every
 * attempt and after a restart, so a relay or mailbox that saw it once can tell a repeat.
 */
type Job = { id: string; message: MailMessage; attempts: number; spooled: boolean; abort?: AbortController };

/** `<id@domain of From>`: the Message-ID every attempt of one message carries (RFC 5322 §3.6.4). */
export function messageIdOf(id: string, from: string): string {
  const domain = /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? "gatehouse.invalid";
  return `<${id}@${domain}>`;
}

/**
 * The mail channel: a bounded in-memory queue in front of SMTP (or the outbox folder). send()
 * only enqueues; failures are retried with backoff, so a relay that is down for a while loses
 * nothing that is still within its attempts. Delivery is at least once: an attempt that timed
 * out after the server took the message is sent again. The queue lives in this process; what
 * close() cannot deliver by its deadline goes to the spool, and resume() (at the next start)
 * sends it, each spooled message once.
 */
export function createMailer(options: MailerOptions, deps: MailerDeps): Mailer {
  const { log, metrics } = deps;
  const clock = deps.clock ?? Date.now;
  const random = deps.random ?? Math.random;
  const policy = { retryBaseMs: options.retryBaseMs, retryMaxMs: options.retryMaxMs ?? RETRY_MAX_MS };
  const concurrency = options.concurrency ?? 2;
  // No file or URL may be read into a message: everything is rendered before it gets here.
  const sandbox = { disableFileAccess: true, disableUrlAccess: true };
  const transport = options.smtpUrl
    ? nodemailer.createTransport({ url: options.smtpUrl, ...sandbox })
    : nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "windows", ...sandbox });

  const waiting: Job[] = [];
  const backingOff = new Map<Job, NodeJS.Timeout>();
  const active = new Set<Job>();
  // Writes to resumed messages' spool rows in flight (a retry's count, a settled message's delete).
  const spoolWrites = new Set<Promise<void>>();
  let renewTimer: NodeJS.Timeout | null = null;
  let takeOverTimer: NodeJS.Timeout | null = null;
  // Promises of mail this process holds (spool rows without a message yet): their leases are renewed too.
  const held = new Set<string>();
  let inFlight = 0;
  let accepting = true;
  let stopped = false;
  let closing: Promise<void> | undefined;
  let idleWaiters: (() => void)[] = [];

  const depth = () => waiting.length + backingOff.size + inFlight;

  function changed(): void {
    const now = depth();
    metrics?.mailQueueDepth.set(now);
    if (now === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  async function deliver(id: string, message: MailMessage, abort: AbortSignal): Promise<void> {
    const mail = {
      from: options.from,
      to: message.to,
      subject: message.subject,
      text: message.text,
      html: message.html,
      messageId: messageIdOf(id, options.from),
      // RFC 3834: automatic mail, so vacation responders do not answer it.
      headers: { "Auto-Submitted": "auto-generated" },
      signal: abort,
    };
    const info = await transport.sendMail(mail);
    if (!options.smtpUrl) {
      const sentAt = new Date(clock()).toISOString();
      await writeOutboxMessage(
        options.outboxDir,
        `${sentAt.replace(/[:.]/g, "-")}-${randomBytes(6).toString("hex")}`,
        info.message as Buffer,
        {
          to: message.to,
          subject: message.subject,
          kind: message.kind,
          links: message.links,
          text: message.text,
          sentAt,
        },
      );
    }
  }

  /**
   * A resumed message is done with: its spool row goes (a failure to delete is logged, not retried).
   * It leaves `active` first, so a close() meanwhile does not spool it again; close() waits for the delete.
   */
  async function unspool(job: Job): Promise<void> {
    if (!job.spooled || !deps.spool) return;
    active.delete(job);
    await spoolWrite(deps.spool.settled(job.id), "mail_spool_delete_failed", job);
  }

  /** Tracked so that close() saves the spool after them: its save is the rows' last word. */
  async function spoolWrite(write: Promise<void>, failure: string, job?: Job): Promise<void> {
    const tracked = write.catch((error: unknown) =>
      log.warn({ event: failure, ...(job ? { kind: job.message.kind } : {}), err: String(error) }),
    );
    spoolWrites.add(tracked);
    await tracked;
    spoolWrites.delete(tracked);
  }

  /** While this process holds spooled rows, their leases are renewed on a timer (unref: it keeps nothing alive). */
  function keepLeases(spool: MailSpool): void {
    if (renewTimer !== null) return;
    renewTimer = setInterval(() => {
      const ids = [...held, ...[...waiting, ...backingOff.keys(), ...active].flatMap((job) => (job.spooled ? [job.id] : []))];
      if (ids.length === 0 || stopped) return stopRenewing();
      void spoolWrite(spool.renew(ids), "mail_spool_update_failed");
    }, spool.renewEveryMs).unref();
  }

  function stopRenewing(): void {
    if (renewTimer !== null) clearInterval(renewTimer);
    renewTimer = null;
  }

  async function attempt(job: Job): Promise<void> {
    job.attempts += 1;
    const { kind } = job.message;
    const abort = new AbortController();
    job.abort = abort;
    try {
      // Counted before it is made (see MailSpool.retrying); a failed write is logged, and the attempt goes ahead.
      if (job.spooled && deps.spool) await spoolWrite(deps.spool.retrying(job.id, job.attempts), "mail_spool_update_failed", job);
      // close() came meanwhile: it spools the job, and nothing may deliver it after that.
      abort.signal.throwIfAborted();
      // The deadline is a timer held here, not AbortSignal.timeout inside AbortSignal.any: Node 20
      // may collect such a timeout before it fires (nodejs/node#57736), and the attempt then waits
      // on a stalled relay for as long as the socket's own timeouts allow.
      const deadline = setTimeout(
        (controller: AbortController) => controller.abort(new DOMException("send timed out", "TimeoutError")),
        options.sendTimeoutMs,
        abort,
      );
      await deliver(job.id, job.message, abort.signal).finally(() => clearTimeout(deadline));
      metrics?.mailSent.inc({ kind, outcome: "sent" });
      log.info({
        event: "mail_sent",
        kind,
        attempt: job.attempts,
        transport: options.smtpUrl ? "smtp" : "outbox",
        ...(job.spooled ? { spooled: true } : {}),
      });
      await unspool(job);
    } catch (error) {
      const reason = describeMailError(error);
      // Cut off by close(): the job is spooled there, not counted as failed.
      if (stopped && abort.signal.aborted) return;
      if (job.attempts >= options.maxAttempts || stopped) {
        metrics?.mailSent.inc({ kind, outcome: "failed" });
        log.error({ event: "mail_failed", kind, attempt: job.attempts, ...reason });
        // Its attempts are spent: no later start sends it again. Stopped, close() spools it.
        if (!stopped) await unspool(job);
      } else {
        const delayMs = retryDelayMs(job.attempts, policy, random());
        log.warn({ event: "mail_retry", kind, attempt: job.attempts, delayMs, ...reason });
        // unref: a waiting retry alone does not keep the process alive; close() is the orderly way out.
        const timer = setTimeout(() => {
          backingOff.delete(job);
          waiting.push(job);
          pump();
        }, delayMs).unref();
        backingOff.set(job, timer);
      }
    } finally {
      job.abort = undefined;
      active.delete(job);
      inFlight -= 1;
      pump();
      changed();
    }
  }

  function pump(): void {
    while (!stopped && inFlight < concurrency && waiting.length > 0) {
      const job = waiting.shift() as Job;
      inFlight += 1;
      active.add(job);
      // attempt() settles every outcome itself (sent, retried or dropped); nothing waits for it.
      void attempt(job);
    }
  }

  function drop(kind: string, reason: "queue_full" | "closed", spooled: boolean): void {
    if (spooled) return log.warn({ event: "mail_deferred", kind, reason });
    metrics?.mailSent.inc({ kind, outcome: "dropped" });
    log.error({ event: "mail_dropped", kind, reason, queueMax: options.queueMax });
  }

  function idle(): Promise<void> {
    return depth() === 0 ? Promise.resolve() : new Promise((resolve) => idleWaiters.push(resolve));
  }

  const mailer: Mailer = {
    full() {
      return !accepting || depth() >= options.queueMax;
    },
    send(message, heldId) {
      // Never throws: the request that caused the message answers the same either way.
      try {
        if (heldId !== undefined) {
          held.delete(heldId);
          // The promise becomes the message; while it is not written, a takeover keeps the promise instead.
          if (deps.spool) void spoolWrite(deps.spool.rendered(heldId, message), "mail_spool_update_failed");
        }
        const spooled = heldId !== undefined && deps.spool !== undefined;
        // A spooled message dropped from memory stays in the spool: its lease runs out, and a sweep sends it.
        if (!accepting) return drop(message.kind, "closed", spooled);
        if (depth() >= options.queueMax) return drop(message.kind, "queue_full", spooled);
        waiting.push({ id: heldId ?? randomUUID(), message, attempts: 0, spooled });
        if (spooled && deps.spool) keepLeases(deps.spool);
        pump();
        changed();
      } catch (error) {
        log.error({ event: "mail_dropped", kind: String(message?.kind), reason: "error", ...describeMailError(error) });
      }
    },
    async hold(kind, intent) {
      if (!deps.spool || !accepting) return null;
      const id = randomUUID();
      try {
        await deps.spool.hold(id, kind, intent);
      } catch (error) {
        log.error({ event: "mail_hold_failed", kind, err: String(error) });
        return null;
      }
      held.add(id);
      keepLeases(deps.spool);
      return id;
    },
    release(heldId, outcome) {
      if (!held.delete(heldId) || !deps.spool || outcome === "retry") return;
      void spoolWrite(deps.spool.settled(heldId), "mail_spool_delete_failed");
    },
    depth,
    idle,
    close(deadlineMs = 10_000) {
      closing ??= (async () => {
        accepting = false;
        // One more attempt now for those waiting out a backoff: the deadline comes before their turn.
        for (const [job, timer] of backingOff) {
          clearTimeout(timer);
          waiting.push(job);
        }
        backingOff.clear();
        pump();
        let deadline: NodeJS.Timeout | undefined;
        await Promise.race([idle(), new Promise((resolve) => (deadline = setTimeout(resolve, deadlineMs)))]);
        clearTimeout(deadline);
        stopped = true;
        for (const timer of backingOff.values()) clearTimeout(timer);
        // Attempts still talking to a dead relay are cut off, so none can deliver after its message is spooled.
        const left = [...waiting, ...backingOff.keys(), ...active];
        for (const job of active) job.abort?.abort();
        waiting.length = 0;
        backingOff.clear();
        transport.close();
        stopRenewing();
        if (takeOverTimer !== null) clearInterval(takeOverTimer);
        // Promises nobody here will keep now: another instance, or the next start, takes them at once.
        if (held.size > 0 && deps.spool) void spoolWrite(deps.spool.handBack([...held]), "mail_spool_update_failed");
        held.clear();
        // A lease written after the save would hold the row from the next start for the lease's length.
        await Promise.all(spoolWrites);
        let spooled = 0;
        if (left.length > 0 && deps.spool) {
          try {
            await deps.spool.save(left.map((job) => ({ id: job.id, message: job.message, attempts: job.attempts })));
            spooled = left.length;
          } catch (error) {
            log.error({ event: "mail_spool_failed", undelivered: left.length, err: String(error) });
          }
        }
        // A settled message's row must be gone before the next start claims what is spooled.
        await Promise.all(spoolWrites);
        if (spooled === 0) for (const job of left) metrics?.mailSent.inc({ kind: job.message.kind, outcome: "failed" });
        changed();
        const undelivered = left.length - spooled;
        const entry = { event: "mail_closed", undelivered, ...(deps.spool ? { spooled } : {}) };
        if (undelivered > 0) log.error(entry);
        else log.info(entry);
      })();
      return closing;
    },
    async resume(limit = options.queueMax) {
      const spool = deps.spool;
      if (!spool || !accepting) return 0;
      // Then every takeOverEveryMs: a killed instance's rows are sent within a lease and a sweep.
      takeOverTimer ??= setInterval(() => {
        mailer.resume().catch((error: unknown) => log.warn({ event: "mail_take_over_failed", err: String(error) }));
      }, spool.takeOverEveryMs).unref();
      const room = Math.max(0, Math.min(limit, options.queueMax - depth() - held.size));
      if (room === 0) return 0;
      const claimed = await spool.claim(room);
      if (stopped) {
        await spool.handBack(claimed.map((row) => row.id));
        return 0;
      }
      for (const row of claimed) {
        if ("intent" in row) {
          if (!deps.onIntent) continue;
          // Each takeover counts: a promise that fails every time it is kept is given up after maxAttempts.
          if (row.attempts >= options.maxAttempts) {
            log.error({ event: "mail_failed", kind: "intent", attempt: row.attempts, reason: "attempts_spent" });
            void spoolWrite(spool.settled(row.id), "mail_spool_delete_failed");
            continue;
          }
          void spoolWrite(spool.retrying(row.id, row.attempts + 1), "mail_spool_update_failed");
          held.add(row.id);
          deps.onIntent(row.id, row.intent);
        } else if (row.attempts >= options.maxAttempts) {
          // Its last attempt was made by a process that died before it heard back: bounded, not repeated.
          metrics?.mailSent.inc({ kind: row.message.kind, outcome: "failed" });
          log.error({ event: "mail_failed", kind: row.message.kind, attempt: row.attempts, reason: "attempts_spent" });
          void spoolWrite(spool.settled(row.id), "mail_spool_delete_failed");
        } else waiting.push({ id: row.id, message: row.message, attempts: row.attempts, spooled: true });
      }
      if (claimed.length > 0) {
        log.info({ event: "mail_resumed", messages: claimed.length });
        keepLeases(spool);
      }
      pump();
      changed();
      return claimed.length;
    },
  };
  return mailer;
}

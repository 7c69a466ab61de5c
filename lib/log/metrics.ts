import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { StoreHealth } from "@/lib/rate-limit/store-guard";
import { connectionStats } from "@/lib/server-contract.mjs";

/** What the metrics read at scrape time (gauges): the hash budget and the shared store's circuits. */
export type MetricSources = {
  hashBudget(): { executing: number; queued: number; concurrency: number; queue: number };
  circuits(): { name: string; state: StoreHealth }[];
  /** The embedded database's WebAssembly memory in bytes; null on PostgreSQL (its memory is another process's). */
  databaseMemoryBytes(): number | null;
  /** Statements run unprepared because the code's prepared texts were too many (lib/db/sql.ts). */
  unpreparedStatements(): number;
  /** Strangers waiting at the door (lib/http/door.ts) now. */
  doorWaiting(): number;
};

const CIRCUIT_STATE: Record<StoreHealth, number> = { up: 0, recovering: 1, down: 2 };

/**
 * The numbers an operator alerts on, in one registry per process (a member of the Gatehouse, so
 * every Next.js bundle counts into the same one: docs/decisions/0006-results-not-exceptions.md). Labels are bounded sets (routes, policies,
 * outcomes, levels): never an address, username or id.
 */
export class Metrics {
  readonly registry = new Registry();
  /** Every refusal and password-check outcome (the security log's lines, counted). */
  readonly outcomes = new Counter({
    name: "gatehouse_security_outcomes_total",
    help: "Refusals and password-check outcomes by route and outcome",
    labelNames: ["route", "outcome", "policy"] as const,
    registers: [this.registry],
  });
  /** Each limit row applied: allowed or refused, by policy. */
  readonly limitDecisions = new Counter({
    name: "gatehouse_limit_decisions_total",
    help: "Rate-limit decisions by policy and result",
    labelNames: ["policy", "result"] as const,
    registers: [this.registry],
  });
  /** 503 unavailable answers: a database or disk failure on a request path, or a fail-closed limit's store down. */
  readonly unavailable = new Counter({
    name: "gatehouse_unavailable_total",
    help: "Requests answered 503 unavailable, by route and cause (database, disk, resources, rate_limit_store)",
    labelNames: ["route", "cause"] as const,
    registers: [this.registry],
  });
  readonly fastPathRefusals = new Counter({
    name: "gatehouse_fast_path_refusals_total",
    help: "Refusals answered by server.mjs without entering Next.js, by route",
    labelNames: ["route"] as const,
    registers: [this.registry],
  });
  /** Requests whose X-Forwarded-For had a hop no address could be read from (a proxy misconfiguration). */
  readonly forwardedForMalformed = new Counter({
    name: "gatehouse_forwarded_for_malformed_total",
    help: "Requests from a trusted proxy with an X-Forwarded-For hop that is no address, each keyed on its own",
    registers: [this.registry],
  });
  readonly lockoutsStarted = new Counter({
    name: "gatehouse_lockouts_started_total",
    help: "Failures that set or lengthened a lock, by lane",
    labelNames: ["lane"] as const,
    registers: [this.registry],
  });
  /** Breached-password range checks: breached, not_found, unknown (failed open), skipped (circuit open, failed open at once). */
  readonly breachChecks = new Counter({
    name: "gatehouse_breach_checks_total",
    help: "Breached-password checks by verdict (unknown and skipped failed open)",
    labelNames: ["verdict"] as const,
    registers: [this.registry],
  });
  readonly passwordCheckSeconds = new Histogram({
    name: "gatehouse_password_check_seconds",
    help: "Argon2id verification time of sign-in password checks",
    buckets: [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2],
    registers: [this.registry],
  });
  readonly storeCallSeconds = new Histogram({
    name: "gatehouse_rate_limit_store_seconds",
    help: "Shared limiter store call time (Redis or PostgreSQL), failures included",
    labelNames: ["store"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5],
    registers: [this.registry],
  });
  /** Mail by kind: sent, failed after its last attempt, or dropped (queue full, or closed). */
  readonly mailSent = new Counter({
    name: "gatehouse_mail_sent_total",
    help: "Mail messages by kind and outcome (sent, failed, dropped)",
    labelNames: ["kind", "outcome"] as const,
    registers: [this.registry],
  });
  /** Set by the mailer on every change: messages waiting, being sent, or waiting to retry. */
  /** Security webhook attempts: delivered (2xx), failed (to be retried) or dropped (attempts spent). */
  readonly webhookDeliveries = new Counter({
    name: "gatehouse_webhook_deliveries_total",
    help: "Security webhook attempts by outcome (delivered, failed, dropped)",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  /** Security webhooks not yet delivered, and the age of the oldest (a dead or refusing receiver). */
  readonly webhookBacklog = new Gauge({
    name: "gatehouse_webhook_backlog",
    help: "Security webhooks waiting in the outbox",
    registers: [this.registry],
  });
  readonly webhookOldestSeconds = new Gauge({
    name: "gatehouse_webhook_oldest_seconds",
    help: "Age of the oldest security webhook waiting in the outbox (0 when none)",
    registers: [this.registry],
  });
  /** The embedded database's free disk, as the disk guard last measured it (PGlite only). */
  readonly diskFreeBytes = new Gauge({
    name: "gatehouse_disk_free_bytes",
    help: "Free bytes on the embedded database's disk at the last reading (warning below twice DISK_MIN_FREE_MB; readiness 503 and writes refused below it)",
    registers: [this.registry],
  });
  readonly mailQueueDepth = new Gauge({
    name: "gatehouse_mail_queue_depth",
    help: "Mail messages held by the queue (waiting, in flight, or retrying)",
    registers: [this.registry],
  });
  readonly challengesIssued = new Counter({
    name: "gatehouse_altcha_challenges_total",
    help: "ALTCHA challenges issued, by difficulty level (0 to 3)",
    labelNames: ["level"] as const,
    registers: [this.registry],
  });

  /** Strangers who waited at the door: let in, sent away with 503 busy after the longest wait, or gone. */
  readonly doorWaits = new Counter({
    name: "gatehouse_door_waits_total",
    help: "Requests without a known device that waited at the door while the event loop was busy, by outcome (entered, busy, gone)",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  readonly doorKnownDevices = new Counter({
    name: "gatehouse_door_known_devices_total",
    help: "Requests of a known device let past the strangers waiting at the door",
    registers: [this.registry],
  });

  constructor(sources: MetricSources) {
    collectDefaultMetrics({ register: this.registry, prefix: "gatehouse_process_" });
    new Gauge({
      name: "gatehouse_hash_budget",
      help: "Argon2id work running and queued, and the budget's bounds",
      labelNames: ["state"] as const,
      registers: [this.registry],
      collect() {
        const now = sources.hashBudget();
        this.set({ state: "executing" }, now.executing);
        this.set({ state: "queued" }, now.queued);
        this.set({ state: "concurrency" }, now.concurrency);
        this.set({ state: "queue" }, now.queue);
      },
    });
    new Gauge({
      name: "gatehouse_rate_limit_circuit_state",
      help: "Each shared-store circuit: 0 closed, 1 half-open, 2 open",
      labelNames: ["circuit"] as const,
      registers: [this.registry],
      collect() {
        for (const circuit of sources.circuits()) this.set({ circuit: circuit.name }, CIRCUIT_STATE[circuit.state]);
      },
    });
    new Gauge({
      name: "gatehouse_door_waiting",
      help: "Requests without a known device waiting at the door now",
      registers: [this.registry],
      collect() {
        this.set(sources.doorWaiting());
      },
    });
    // An instance's idle memory is its hosting bill (issue 28): RSS and heap come from the default
    // metrics (gatehouse_process_process_resident_memory_bytes, gatehouse_process_nodejs_heap_size_used_bytes);
    // this is the share of RSS that PGlite holds. WebAssembly memory only grows, so it is its peak.
    new Gauge({
      name: "gatehouse_database_memory_bytes",
      help: "Memory held by the embedded database (PGlite's WebAssembly memory); absent on PostgreSQL",
      registers: [this.registry],
      collect() {
        const bytes = sources.databaseMemoryBytes();
        if (bytes === null) this.reset();
        else this.set(bytes);
      },
    });
    // server.mjs's connection guard (lib/http/connections.mjs): absent where it does not run.
    new Gauge({
      name: "gatehouse_connections",
      help: "Open connections, the cap server.mjs holds them to, and the share one client address may hold",
      labelNames: ["state"] as const,
      registers: [this.registry],
      collect() {
        const stats = connectionStats();
        if (!stats) return this.reset();
        this.set({ state: "open" }, stats.open);
        this.set({ state: "cap" }, stats.cap);
        this.set({ state: "per_address" }, stats.perAddress);
      },
    });
    new Counter({
      name: "gatehouse_connections_closed_total",
      help: "Connections the guard closed to make room (reclaimed: an idle one; refused: a new one, every open one busy), by the limit reached (share, cap)",
      labelNames: ["action", "limit"] as const,
      registers: [this.registry],
      collect() {
        const stats = connectionStats();
        this.reset();
        if (!stats) return;
        for (const limit of ["share", "cap"] as const) {
          this.inc({ action: "reclaimed", limit }, stats.reclaimed[limit]);
          this.inc({ action: "refused", limit }, stats.refused[limit]);
        }
      },
    });
    // The code has a few dozen statement texts, values always parameters; past 200 distinct texts
    // one is likely built with a value in it (lib/db/sql.ts).
    new Counter({
      name: "gatehouse_sql_unprepared_statements_total",
      help: "Statements run unprepared because more distinct statement texts came than the code has: one may be built with a value in it",
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(sources.unpreparedStatements());
      },
    });
  }
}

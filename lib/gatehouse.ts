import type { Brand } from "@/lib/brand/brand";
import { loadBrand } from "@/lib/brand/brand";
import type { AppConfig } from "@/lib/config/env";
import type { Database } from "@/lib/db/client";
import { DataHealth } from "@/lib/db/data-health";
import { DiskGuard } from "@/lib/db/disk-guard";
import type { Sql } from "@/lib/db/sql";
import { DigestTally } from "@/lib/digest/tally";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { cookieName } from "@/lib/http/cookies";
import type { UtilisationMeter } from "@/lib/http/door";
import { createI18n, type I18n } from "@/lib/i18n/i18n";
import { createLogger, type Logger } from "@/lib/log/logger";
import { Metrics } from "@/lib/log/metrics";
import type { PasswordHasher } from "@/lib/password/hash";
import { OutageLog } from "@/lib/rate-limit/outage";
import { linkOutlivesQuota } from "@/lib/recovery/quota";
import { AddressWatch } from "@/lib/webhooks/attacks";
import { buildAccounts, type AccountsRoom } from "./gatehouse/accounts";
import { buildFront, type FrontRoom } from "./gatehouse/front";
import { buildLimits, type LimitsRoom } from "./gatehouse/limits";
import { buildMail, type MailRoom } from "./gatehouse/mail";
import { buildPasswords, type PasswordsRoom } from "./gatehouse/passwords";

/** What every room shares: the configuration, the database, the clock, the log and the counters. */
export type CoreRoom = {
  /** The one parsed configuration; rooms read their policies from it (`gate.config.lockout`), never from a copy. */
  config: AppConfig;
  /** The client's name, logo, colours and links (BRAND_*), the logo's bytes read and checked once at start. */
  brand: Brand;
  /** The languages (messages/<locale>/*.json, compiled once at start) and the request's choice among them. */
  i18n: I18n;
  clock: () => number;
  /** This instance's structured log (built from its LOG_LEVEL unless `options.log`). */
  log: Logger;
  /** The database client every store and route uses. */
  prisma: PrismaClient;
  /** The same database without Prisma, for the sign-in path's statements (lib/db/sql.ts). */
  sql: Sql;
  /** The counters, histograms and gauges GET /api/metrics exposes. */
  metrics: Metrics;
  /** Database and disk failures on request paths, logged once per episode. */
  outages: OutageLog;
  /** Whether requests are failing on damaged stored data: readiness reads it. */
  dataHealth: DataHealth;
  /** The embedded database's disk against DISK_MIN_FREE_MB (readiness, and writes refused below it); null on PostgreSQL. */
  disk: DiskGuard | null;
  /** Networks the per-address sign-in budget refused, for address.under_attack (lib/webhooks/attacks.ts); null without webhooks. */
  addressWatch: AddressWatch | null;
  /** What the sign-in routes answered, for the weekly digest (lib/digest/); null without DIGEST_EMAIL. */
  digestTally: DigestTally | null;
  /**
   * Finishes background work, sends what the mail queue holds (within SHUTDOWN_GRACE_MS), closes
   * the limiter and replay stores, then the database; a second call waits for the first.
   */
  close(): Promise<void>;
};

/**
 * Every protection layer and the database they share, built from one configuration: its members
 * grouped by room, each room's type and builder in lib/gatehouse/ (the builder takes its slice of
 * the configuration).
 */
export type Gatehouse = CoreRoom & LimitsRoom & FrontRoom & PasswordsRoom & AccountsRoom & MailRoom;

/** What a caller may build a Gatehouse with besides its configuration and database (tests inject a counting hasher). */
export type GatehouseOptions = {
  hasher?: PasswordHasher;
  log?: Logger;
  utilisation?: UtilisationMeter;
  /**
   * The header server.mjs writes each socket's address into, as the server that serves this
   * instance announced it before the instance was built (lib/app.ts reads `peerHeaderFromServer()`
   * once); none: every client's address is unknown, and the routes that need one answer 503 naming
   * server.mjs.
   */
  peerHeader?: string | undefined;
};

/** For intervals only (the door, the hash budget's recent pressure): never steps, unlike the wall clock. */
const monotonicMs = () => performance.now();

/**
 * The composition root: every room built from a parsed configuration and an open database,
 * nothing read from the environment or from globals, so a test can build as many as it needs.
 * The app's own instance is lib/app.ts's `gatehouse()`.
 */
export async function createGatehouse(config: AppConfig, database: Database, options: GatehouseOptions = {}): Promise<Gatehouse> {
  const clock = Date.now;
  const log = options.log ?? createLogger(config.log.level);
  // First: a logo that cannot be served, catalogues that do not parse, or links that outlive
  // their quota stop the start before any store, job or mail starts.
  const brand = loadBrand(config);
  const i18n = createI18n({ ...config.i18n, cookieName: cookieName(config, "locale") });
  const linkProblem = linkOutlivesQuota(
    "PASSWORD_RESET_LINK_MINUTES",
    config.email.resetLinkLifetimeMs,
    "RATE_LIMIT_RECOVERY_MAIL",
    config.rateLimit.policies.recoveryMail,
  );
  if (linkProblem) throw new Error(linkProblem);

  // The gauges read the hash budget, the circuits and the door at scrape time, after each is built below.
  const metrics = new Metrics({
    hashBudget: () => ({
      executing: passwords.hashBudget.executing,
      queued: passwords.hashBudget.queued,
      concurrency: config.passwords.hashConcurrency,
      queue: config.passwords.hashQueue,
    }),
    circuits: () => limits.circuits(),
    databaseMemoryBytes: () => database.memoryBytes(),
    unpreparedStatements: () => database.unpreparedStatements(),
    doorWaiting: () => front.door?.waiting ?? 0,
  });
  const limits = await buildLimits(config.rateLimit, { prisma: database.prisma, clock, metrics, log });
  const passwords = buildPasswords(config.passwords, { clock, monotonicMs, log, metrics, hasher: options.hasher });
  const accounts = buildAccounts(config, { database, clock, log, brand, replays: limits.room.replays });
  const digestTally = config.digest ? new DigestTally(clock) : null;
  const front = buildFront(config, {
    clock,
    monotonicMs,
    log,
    metrics,
    i18n,
    devices: accounts.devices,
    hashBudget: passwords.hashBudget,
    digestTally,
    peerHeader: options.peerHeader,
    utilisation: options.utilisation,
  });
  const mail = buildMail(config, { database, clock, log, metrics, brand, i18n, limiter: limits.room.limiter, accounts });

  let closing: Promise<void> | undefined;
  const core: CoreRoom = {
    config,
    brand,
    i18n,
    clock,
    log,
    prisma: database.prisma,
    sql: database.sql,
    metrics,
    outages: new OutageLog(log, clock),
    dataHealth: new DataHealth(monotonicMs),
    disk:
      config.database.target.kind === "pglite"
        ? new DiskGuard(config.database.target.dataDir, config.database.minFreeBytes, log, (reading) =>
            metrics.diskFreeBytes.set(reading.freeBytes),
          )
        : null,
    addressWatch: config.webhooks ? new AddressWatch() : null,
    digestTally,
    close: () =>
      (closing ??= (async () => {
        try {
          await mail.background.idle();
          // A dead relay holds the shutdown no longer than this; what is left waits in the spool.
          await mail.mailer.close(config.mail.shutdownWaitMs);
          await limits.close();
        } finally {
          await database.close();
        }
      })()),
  };
  return { ...core, ...limits.room, ...front, ...passwords, ...accounts, ...mail };
}

import { localized } from "@/lib/http/responses";
import type { AppConfig } from "@/lib/config/env";
import type { Database } from "@/lib/db/client";
import { postgresReplayStore } from "@/lib/captcha/postgres-replay-store";
import { redisReplayStore } from "@/lib/captcha/replay-store";
import { memoryReplayStore, type ReplayStore } from "@/lib/captcha/replay-store";
import type { AltchaSettings } from "@/lib/captcha/altcha";
import { parseTrustedProxies, resolveClientAddress, type ClientAddress } from "@/lib/http/client-address";
import { FastPathCache, type FastRoute, type HeaderReader } from "@/lib/http/fast-path";
import { ROUTE_RULES } from "@/lib/http/route-policies";
import { prismaSecurityEvents, type SecurityEvents } from "@/lib/events/security-events";
import { randomBytes } from "node:crypto";
import { LRUCache } from "lru-cache";
import { sqlKnownDevices, type KnownDevices } from "@/lib/devices/known-devices";
import { deviceIdOf, doorCheckedDeviceId } from "@/lib/devices/device-token";
import { cookieName, deviceTokenOfHeader } from "@/lib/http/cookies";
import { busy } from "@/lib/http/refusals";
import { Door, DOOR_EXEMPT_PATHS, eventLoopUtilisation, type UtilisationMeter } from "@/lib/http/door";
import { doorPolicy } from "@/lib/http/door-rules";
import { prismaBrowserSessions, type BrowserSessions } from "@/lib/sessions/browser-sessions";
import type { SessionPolicy } from "@/lib/sessions/session-rules";
import { sqlLockoutRepository, type LockoutRepository } from "@/lib/lockout/repository";
import type { LockoutPolicy } from "@/lib/lockout/lockout-rules";
import { createLogger, type Logger } from "@/lib/log/logger";
import { Metrics } from "@/lib/log/metrics";
import { HashBudget } from "@/lib/password/hash-budget";
import { argon2Hasher, type PasswordHasher } from "@/lib/password/hash";
import { argon2Params } from "@/lib/password/hash";
import { rangeBreachCheck, type BreachedPasswords } from "@/lib/password/breached";
import { digestKey, RateLimiter } from "@/lib/rate-limit/limiter";
import type { Decision, RateLimitStore, RateLimitStoreKind } from "@/lib/rate-limit/store";
import { bandwidthsNeeded, MemoryRateLimitStore } from "@/lib/rate-limit/stores/memory";
import { createPostgresRateLimitStore } from "@/lib/rate-limit/stores/postgres";
import { preLimited } from "@/lib/rate-limit/store";
import { connectRedis, RedisRateLimitStore, untilReady } from "@/lib/rate-limit/stores/redis";
import { createStoreGuard, guardReplayStore, type StoreGuard, type StoreHealth } from "@/lib/rate-limit/store-guard";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import type { Sql } from "@/lib/db/sql";
import { appOrigin } from "@/lib/http/same-origin";
import { DigestTally } from "@/lib/digest/tally";
import { AddressWatch } from "@/lib/webhooks/attacks";
import { Background } from "@/lib/jobs/jobs";
import { createMailer, mailerOptions, outboxOnlyNotice } from "@/lib/mail/mailer";
import { prismaMailSpool } from "@/lib/mail/spool";
import type { Mailer } from "@/lib/mail/types";
import { prismaEmailTokens, type EmailTokens } from "@/lib/recovery/email-tokens";
import { linkOutlivesQuota } from "@/lib/recovery/quota";
import { Recovery } from "@/lib/recovery/recovery";
import { prismaPasskeys, type Passkeys } from "@/lib/passkeys/store";
import { prismaFactors, type Factors } from "@/lib/factors/store";
import { prismaPendingSignIns, type PendingSignIns } from "@/lib/factors/pending-sign-ins";
import { sealKeyOf } from "@/lib/factors/sealed-secret";
import { relyingParty, type PasskeySettings } from "@/lib/passkeys/webauthn";
import { OutageLog } from "@/lib/rate-limit/outage";
import { loadBrand, mailBrandOf, type Brand } from "@/lib/brand/brand";
import { createI18n, type I18n } from "@/lib/i18n/i18n";
import { messageOf } from "@/lib/log/message";
import { noticeWebhook } from "@/lib/webhooks/notices";

/** Every protection layer and the database they share, built from one configuration. */
export type Gatehouse = {
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
  limiter: RateLimiter;
  /** The limiter's backend and whether it answers (always "up" in memory). */
  storeHealth(): { kind: RateLimitStoreKind; state: StoreHealth };
  replays: ReplayStore;
  altcha: AltchaSettings;
  lockouts: LockoutRepository;
  /** The username-wide lockout that untrusted clients share (with NIST's cap). */
  lockoutPolicy: LockoutPolicy;
  /** One known device's own lockout: the same schedule, no cap. */
  deviceLockoutPolicy: LockoutPolicy;
  devices: KnownDevices;
  /** Browser sessions' server records: a session cookie is only as live as its row. */
  sessions: BrowserSessions;
  sessionPolicy: SessionPolicy;
  /** Failed password checks per client address key in the last 15 minutes (the challenge size). */
  addressFailures: LRUCache<string, number>;
  events: SecurityEvents;
  hashBudget: HashBudget;
  /** The counters, histograms and gauges GET /api/metrics exposes. */
  metrics: Metrics;
  /** Networks the per-address sign-in budget refused, for address.under_attack (lib/webhooks/attacks.ts); null without webhooks. */
  addressWatch: AddressWatch | null;
  /** What the sign-in routes answered, for the weekly digest (lib/digest/); null without DIGEST_EMAIL. */
  digestTally: DigestTally | null;
  /** Refusals by address that server.mjs answers without entering Next.js, until their retry time. */
  fastPath: FastPathCache;
  /** Strangers wait here while the event loop is busy (lib/http/door.ts); null: DOOR_BUSY_SHARE=1. */
  door: Door | null;
  /** Hashes and checks passwords (Argon2id at the configured parameters unless `options.hasher`), NFC inside. */
  hasher: PasswordHasher;
  /** Database and disk failures on request paths, logged once per episode. */
  outages: OutageLog;
  clientAddress(headers: Headers): ClientAddress;
  /** The lockout key of a normalised username: a digest, so the table holds no usernames. */
  usernameKey(email: string): string;
  /** The lockout key of one known device. */
  deviceLockKey(deviceId: string): string;
  /** Work requests start and do not wait for (account lookups and emails): their answers stay alike. */
  background: Background;
  mailer: Mailer;
  emailTokens: EmailTokens;
  /** Everything that emails an account's owner: verification, reset and unlock links, notices. */
  recovery: Recovery;
  passkeys: Passkeys;
  /** Authenticator apps, recovery codes and "a passkey after the password". */
  factors: Factors;
  /** Right passwords waiting for their second step. */
  pendingSignIns: PendingSignIns;
  /** The second step's own lock, per account or known device (a passkey does not meet it). */
  secondFactorLockoutPolicy: LockoutPolicy;
  /** The second step's lock: an account's, or a known device's (wrong mailed device codes count on the strangers' lock). */
  secondFactorLockKey(subject: { userId: string } | { deviceId: string }): string;
  /** Pwned Passwords range checks of new and signing-in passwords (off without BREACHED_PASSWORDS_URL); fail open. */
  breachedPasswords: BreachedPasswords;
  /** The relying party and the challenges of every WebAuthn ceremony (single-use through `replays`). */
  passkeySettings: PasskeySettings;
  /**
   * Finishes background work, sends what the mail queue holds (within SHUTDOWN_GRACE_MS), closes
   * the limiter and replay stores, then the database; a second call waits for the first.
   */
  close(): Promise<void>;
};

type Backend = {
  store: RateLimitStore;
  replays: ReplayStore;
  health(): StoreHealth;
  /** Each shared-store circuit and its state (none in memory). */
  circuits(): { name: string; state: StoreHealth }[];
  close(): Promise<void>;
};

/**
 * The limiter and replay stores. Memory: per instance, nothing to fail. Redis or PostgreSQL:
 * shared by every instance, behind a per-instance memory store with the same policies (which
 * refuses a flood before it reaches the shared store), each call behind its own policy's guard
 * (timeout + circuit breaker; the replay store has one of its own): one client's flood of one
 * endpoint cannot open the circuit that sign-in depends on.
 */
async function openBackend(config: AppConfig, prisma: PrismaClient, clock: () => number, metrics: Metrics, log: Logger): Promise<Backend> {
  const local = () =>
    new MemoryRateLimitStore({
      maxEntries: config.rateLimit.memoryMaxEntries,
      maxBandwidths: bandwidthsNeeded(config.rateLimit.policies),
      clock,
    });
  if (config.rateLimit.store === "memory") {
    return {
      store: local(),
      replays: memoryReplayStore(config.rateLimit.memoryMaxEntries, clock),
      health: () => "up",
      circuits: () => [],
      close: async () => {},
    };
  }
  const guards = new Map<string, StoreGuard>();
  const guardFor = (name: string) => {
    let guard = guards.get(name);
    if (!guard) {
      guard = createStoreGuard({
        timeoutMs: config.rateLimit.storeTimeoutMs,
        breakerFailures: config.rateLimit.breakerFailures,
        halfOpenAfterMs: config.rateLimit.breakerHalfOpenMs,
        onOpen: () =>
          log.error({
            event: "rate_limit_breaker_open",
            store: config.rateLimit.store,
            circuit: name,
            effect: "this policy's outage rule applies",
          }),
        onClose: () => log.info({ event: "rate_limit_breaker_closed", store: config.rateLimit.store, circuit: name }),
      });
      guards.set(name, guard);
    }
    return guard;
  };
  // The worst circuit is the store's health: "down" as soon as any policy's circuit is open.
  const circuits = () => [...guards].map(([name, guard]) => ({ name, state: guard.health() }));
  const guardsHealth = (): StoreHealth => {
    const states = circuits().map((circuit) => circuit.state);
    return states.includes("down") ? "down" : states.includes("recovering") ? "recovering" : "up";
  };
  // The store-call histogram times what the guard times: the store's own answer.
  const timed = (kind: RateLimitStore["kind"], call: () => Promise<Decision>) => async () => {
    const end = metrics.storeCallSeconds.startTimer({ store: kind });
    try {
      return await call();
    } finally {
      end();
    }
  };
  // Every call through its policy's guard (timeout + circuit breaker): one flooded policy that
  // times out opens its own circuit, never the one that guards sign-in.
  let shared: RateLimitStore;
  let replays: ReplayStore;
  let health: () => StoreHealth = guardsHealth;
  let close: () => Promise<void>;
  if (config.rateLimit.store === "redis") {
    const redis = connectRedis(
      config.rateLimit.redisUrl,
      throttled(10_000, (error) => log.warn({ event: "redis_connection_error", err: error.message })),
    );
    // Waits briefly for the first connection; a Redis that is down does not stop the start.
    if (!(await untilReady(redis, 2_000))) log.error({ event: "rate_limit_store_unreachable", store: "redis" });
    const store = new RedisRateLimitStore(redis, { keyPrefix: config.rateLimit.keyPrefix });
    shared = {
      kind: store.kind,
      consume: (key, policy, nowMs, cost) =>
        guardFor(policy.name).execute(timed(store.kind, () => store.consume(key, policy, nowMs, cost))),
    };
    replays = redisReplayStore(redis, config.rateLimit.keyPrefix);
    // Disconnected counts as down before the breaker has seen enough failures to open.
    health = () => (redis.status === "ready" ? guardsHealth() : "down");
    close = async () => void (await redis.quit().catch(() => redis.disconnect()));
  } else {
    // Each store deletes its own expired rows on a timer of its own. The guard goes inside the
    // store's per-key queue, so its timeout bounds the database's answer, not the wait in line.
    const postgres = createPostgresRateLimitStore(prisma, {
      onCleanupError: (error) => log.warn({ event: "rate_limit_cleanup_failed", err: String(error) }),
      guardEach: (policy, work) => guardFor(policy.name).execute((signal) => timed("postgres", () => work(signal))()),
      maxQueueWaitMs: config.rateLimit.storeTimeoutMs,
    });
    const postgresReplays = postgresReplayStore(prisma, {
      onCleanupError: (error) => log.warn({ event: "altcha_replay_cleanup_failed", err: String(error) }),
    });
    shared = postgres;
    replays = postgresReplays;
    close = async () => {
      await Promise.all([postgres.close(), postgresReplays.close()]);
    };
  }
  return {
    store: preLimited(local(), shared),
    circuits,
    replays: guardReplayStore(replays, guardFor("altcha-replays")),
    health,
    close,
  };
}

/** For intervals only (the door, the hash budget's recent pressure): never steps, unlike the wall clock. */
const monotonicMs = () => performance.now();

/** Routes whose first limit is keyed by the address alone, at a fixed path: the fast path's. */
function fastRoutes(): FastRoute[] {
  return ROUTE_RULES.flatMap((rule) =>
    "limits" in rule && rule.limits[0]?.key === "address" && !rule.path.includes("[")
      ? [{ method: rule.method, path: rule.path, style: rule.refusal, deviceLane: rule.deviceLane !== undefined }]
      : [],
  );
}

/** Calls `fn` at most once per `intervalMs`: an outage must not turn every request into a log line. */
function throttled<T>(intervalMs: number, fn: (value: T) => void): (value: T) => void {
  let lastMs = -Infinity;
  return (value) => {
    const nowMs = Date.now();
    if (nowMs - lastMs < intervalMs) return;
    lastMs = nowMs;
    fn(value);
  };
}

/** What a caller may build a Gatehouse with besides its configuration and database (tests inject a counting hasher). */
export type GatehouseOptions = {
  hasher?: PasswordHasher;
  log?: Logger;
  utilisation?: UtilisationMeter;
  /**
   * The header server.mjs writes each socket's address into, as the server that serves this
   * instance announced it (lib/app.ts passes `peerHeaderFromServer`); none: every client's address
   * is unknown, and the routes that need one answer 503 naming server.mjs.
   */
  peerHeader?: () => string | undefined;
};

/**
 * The composition root: every layer built from a parsed configuration and an open database,
 * nothing read from the environment or from globals, so a test can build as many as it needs.
 * The app's own instance is lib/app.ts's `gatehouse()`.
 */
export async function createGatehouse(config: AppConfig, database: Database, options: GatehouseOptions = {}): Promise<Gatehouse> {
  const clock = Date.now;
  const log = options.log ?? createLogger(config.log.level);
  // First: a logo that cannot be served stops the start before any store, job or mail starts.
  const brand = loadBrand(config);
  // Catalogues that do not parse, or a DEFAULT_LOCALE without one, stop the start here too.
  const i18n = createI18n({ ...config.i18n, cookieName: cookieName(config, "locale") });
  const { prisma } = database;
  const linkProblem = linkOutlivesQuota(
    "PASSWORD_RESET_LINK_MINUTES",
    config.email.resetLinkLifetimeMs,
    "RATE_LIMIT_RECOVERY_MAIL",
    config.rateLimit.policies.recoveryMail,
  );
  if (linkProblem) throw new Error(linkProblem);
  const trustedProxies = parseTrustedProxies(config.http.trustedProxies);
  const trustedNetworks = parseTrustedProxies(config.http.trustedNetworks, "TRUSTED_NETWORKS");
  const usernameLimit = config.rateLimit.policies.signInUsername.algorithm;
  const usernameLimitMs =
    usernameLimit.kind === "token-bucket" ? Math.max(...usernameLimit.bandwidths.map((b) => b.periodMs)) : usernameLimit.windowMs;
  // The gauges read the hash budget and the circuits at scrape time, after both are built below.
  const metrics = new Metrics({
    hashBudget: () => ({
      executing: hashBudget.executing,
      queued: hashBudget.queued,
      concurrency: config.passwords.hashConcurrency,
      queue: config.passwords.hashQueue,
    }),
    circuits: () => backend.circuits(),
    databaseMemoryBytes: () => database.memoryBytes(),
    unpreparedStatements: () => database.unpreparedStatements(),
    doorWaiting: () => door?.waiting ?? 0,
  });
  const backend = await openBackend(config, prisma, clock, metrics, log);
  const failureLogs = new Map<string, (error: unknown) => void>();
  const limiter = new RateLimiter(
    backend.store,
    config.rateLimit.policies,
    config.rateLimit.keySecret,
    clock,
    (policy, error) => {
      // Protection is weakened (fail open) or traffic refused (fail closed): error, once per 10 s per policy.
      let report = failureLogs.get(policy.name);
      if (!report) {
        report = throttled(10_000, (err: unknown) =>
          log.error({ event: "rate_limit_store_failed", policy: policy.name, failMode: policy.failMode, err: String(err) }),
        );
        failureLogs.set(policy.name, report);
      }
      report(error);
    },
    config.rateLimit.trustedNetworkAllowance,
  );
  let warnedUnknownPeer = false;
  const peerHeader = options.peerHeader ?? (() => undefined);
  const resolveClient = (headers: HeaderReader): ClientAddress =>
    resolveClientAddress(headers, {
      trustedProxies,
      trustedNetworks,
      ipv6PrefixLength: config.http.ipv6PrefixLength,
      peerHeader: peerHeader(),
    });
  // Protection is weakened (these requests escape the per-address limits): error, once per 10 s.
  const reportMalformedHop = throttled(10_000, (hop: string) =>
    log.error({ event: "forwarded_for_malformed", hop, hint: "a trusted proxy wrote an X-Forwarded-For hop that is no address" }),
  );
  const clientAddress = (headers: HeaderReader): ClientAddress => {
    const client = resolveClient(headers);
    if (client.source === "malformed") {
      metrics.forwardedForMalformed.inc();
      reportMalformedHop(client.malformedHop ?? "");
    }
    if (client.source === "unknown" && !warnedUnknownPeer) {
      warnedUnknownPeer = true;
      // Routes with address limits answer 503 until the server runs behind server.mjs.
      log.error({ event: "client_address_unknown", hint: "run server.mjs (npm start), not next start" });
    }
    return client;
  };
  // A device cookie whose username-free signature holds, from a raw Cookie header: an HMAC, no
  // read. The door schedules by it, and the fast path lets it through to its device lane.
  const signedDeviceToken = (headers: HeaderReader): string | null => {
    const token = deviceTokenOfHeader(headers.get("cookie"), config);
    return doorCheckedDeviceId(config.devices.cookieSecret, token, clock()) === null ? null : token!;
  };
  const digestTally = config.digest ? new DigestTally(clock) : null;
  // The fast path resolves again what the route will resolve: counted and logged there, once.
  const fastPath = new FastPathCache(
    fastRoutes(),
    resolveClient,
    clock,
    config.rateLimit.memoryMaxEntries,
    config.nodeEnv === "production",
    (path) => {
      metrics.fastPathRefusals.inc({ route: path });
      digestTally?.recordEarlyRefusal(path);
      log.debug({ event: "refused_early", path });
    },
    {
      // The reader itself, not a Headers built from it: a Headers per refusal cost more than the rest of the lookup.
      of: (headers) => i18n.localeOf(headers),
      say: (response, locale) => localized(response, locale, i18n.translator(locale)),
    },
    (headers) => signedDeviceToken(headers) !== null,
  );
  // A stranger sent away is service refused: said once per 10 s, counted every time.
  const reportDoorBusy = throttled(10_000, () =>
    log.warn({ event: "door_busy", effect: "requests without a known device waited their longest and were answered 503" }),
  );
  // Its pressure is remembered per second of a monotonic clock: on the wall clock, a step back
  // would keep an old peak "recent" for the step's length.
  const hashBudget = new HashBudget(
    config.passwords.hashConcurrency,
    config.passwords.hashQueue,
    config.passwords.hashTrustedSlots,
    monotonicMs,
  );
  const devices = sqlKnownDevices(database.sql, { secret: config.devices.cookieSecret, lifetimeMs: config.devices.cookieLifetimeMs });
  const door =
    config.http.door === null
      ? null
      : new Door(doorPolicy(config.http.door), {
          // Intervals only: on the wall clock, a step back would stop every refill and trickle.
          clock: monotonicMs,
          utilisation: options.utilisation ?? eventLoopUtilisation(),
          deviceToken: signedDeviceToken,
          recognise: async (token) => ((await devices.isKnown(token, clock())) ? deviceIdOf(token) : null),
          busyAnswer: (retryAfterMs, headers) => fastPath.refusal(busy(retryAfterMs), headers),
          exempt: DOOR_EXEMPT_PATHS,
          onWait: (outcome) => {
            metrics.doorWaits.inc({ outcome });
            if (outcome === "busy") reportDoorBusy(undefined);
          },
          onKnownDevice: () => metrics.doorKnownDevices.inc(),
          ownerCheckRunning: () => hashBudget.trustedExecuting > 0,
        });
  const background = new Background((task, error) => log.error({ event: "background_task_failed", task, err: messageOf(error) }));
  // Promises of mail a killed process left are kept by Recovery, made below (resume starts after it).
  let keepIntent: (heldId: string, intent: unknown) => void = () => {};
  const mailer = createMailer(mailerOptions(config), {
    log,
    metrics,
    spool: prismaMailSpool(prisma, clock),
    onIntent: (heldId, intent) => keepIntent(heldId, intent),
  });
  const emailTokens = prismaEmailTokens(prisma);
  // Links that sit in files on this machine reach no owner: an error in production, news on `npm run dev`.
  const outboxOnly = outboxOnlyNotice(config);
  if (outboxOnly) log[outboxOnly.level](outboxOnly.entry);
  const lockouts = sqlLockoutRepository(database.sql);
  const pendingSignIns = prismaPendingSignIns(prisma);
  const usernameKey = (email: string) => digestKey(config.rateLimit.keySecret, ["lockout", email]);
  const recovery = new Recovery({
    prisma,
    tokens: emailTokens,
    mailer,
    limiter,
    background,
    clock,
    settings: {
      publicUrl: appOrigin(config.http.publicUrl),
      brand: mailBrandOf(brand, appOrigin(config.http.publicUrl)),
      verifyLifetimeMs: config.email.verifyLinkLifetimeMs,
      resetLifetimeMs: config.email.resetLinkLifetimeMs,
      unlockLifetimeMs: config.email.unlockLinkLifetimeMs,
    },
    i18n,
    isPaused: async (email) => {
      const nowMs = clock();
      const check = await lockouts.check(usernameKey(email), nowMs, config.lockout);
      const row = check.seen.row;
      // Failures as recent as the per-username limit still counts them: the owner's browser may be
      // refused by it after the lock itself ended. Older ones would let a stranger keep a link
      // coming with one wrong password every 12 hours.
      return check.locked || (row !== null && row.failureCount > 0 && nowMs - row.lastFailureAtMs < usernameLimitMs);
    },
    onSkipped: (kind, reason) => log.info({ event: "mail_skipped", kind, reason }),
    onNotice: config.webhooks ? noticeWebhook(database.sql) : undefined,
    replaceDeviceCode: (pendingId, codeDigest) => pendingSignIns.replaceCode(pendingId, codeDigest, clock()),
  });
  keepIntent = (heldId, intent) => recovery.resumeIntent(heldId, intent);
  // What the last process could not deliver, or a killed one promised: sent now (and swept on a timer), each message once.
  background.run("mail_resume", () => mailer.resume().then(() => {}));
  // Only weakened, never refused: warn (the metric counts each), once per 10 s.
  const reportBreachOutage = throttled(10_000, (reason: string) =>
    log.warn({
      event: "breach_check_unavailable",
      reason,
      effect:
        reason === "slow"
          ? "checked, but slower than half the timeout: counted toward the breaker"
          : "failed open: the password was not checked against the corpus",
    }),
  );
  const breachedPasswords = rangeBreachCheck({
    url: config.passwords.breachedUrl,
    timeoutMs: config.passwords.breachedTimeoutMs,
    cacheMs: config.passwords.breachedCacheMs,
    clock,
    onUnavailable: reportBreachOutage,
    onVerdict: (verdict) => metrics.breachChecks.inc({ verdict }),
  });
  let closing: Promise<void> | undefined;
  return {
    config,
    brand,
    i18n,
    clock,
    log,
    prisma,
    sql: database.sql,
    limiter,
    storeHealth: () => ({ kind: backend.store.kind, state: backend.health() }),
    replays: backend.replays,
    altcha: { hmacSecret: config.altcha.hmacSecret, expiresSeconds: config.altcha.expiresSeconds, maxCounter: config.altcha.maxCounter },
    lockouts,
    events: prismaSecurityEvents(
      prisma,
      database.sql,
      clock,
      (error) => log.warn({ event: "security_event_not_recorded", err: String(error) }),
      config.webhooks !== null,
    ),
    lockoutPolicy: config.lockout,
    deviceLockoutPolicy: config.devices.lockout,
    devices,
    sessions: prismaBrowserSessions(prisma, database.sql),
    sessionPolicy: config.session.policy,
    // noUpdateTTL: an address's count lapses 15 minutes after its first failure, not after its last,
    // so ongoing typos behind a shared address do not keep everyone there at the top level.
    addressFailures: new LRUCache<string, number>({ max: config.rateLimit.memoryMaxEntries, ttl: 15 * 60_000, noUpdateTTL: true }),
    hashBudget,
    metrics,
    hasher: options.hasher ?? argon2Hasher(argon2Params(config.passwords.argon2Profile)),
    fastPath,
    digestTally,
    addressWatch: config.webhooks ? new AddressWatch() : null,
    door,
    outages: new OutageLog(log, clock),
    clientAddress,
    usernameKey,
    deviceLockKey: (deviceId) => digestKey(config.rateLimit.keySecret, ["device-lockout", deviceId]),
    background,
    mailer,
    emailTokens,
    recovery,
    passkeys: prismaPasskeys(prisma),
    factors: prismaFactors(prisma, database.sql, { seal: sealKeyOf(config.factors.secret), recoveryCodes: config.factors.secret }),
    pendingSignIns,
    secondFactorLockoutPolicy: config.factors.lockout,
    secondFactorLockKey: (subject) =>
      digestKey(
        config.rateLimit.keySecret,
        "userId" in subject ? ["second-factor", subject.userId] : ["second-factor-device", subject.deviceId],
      ),
    breachedPasswords,
    passkeySettings: {
      rp: relyingParty(appOrigin(config.http.publicUrl), brand.name),
      // The memory replay store forgets what was spent at a restart: a challenge issued before one
      // must not verify after it, so a single instance signs with a key of this process's own.
      challengeSecret:
        config.rateLimit.store === "memory"
          ? `${config.passkeys.challengeSecret}:${randomBytes(16).toString("hex")}`
          : config.passkeys.challengeSecret,
      challengeLifetimeMs: 5 * 60_000,
      replays: backend.replays,
    },
    close: () =>
      (closing ??= (async () => {
        try {
          await background.idle();
          // A dead relay holds the shutdown no longer than this; what is left waits in the spool.
          await mailer.close(config.mail.shutdownWaitMs);
          await backend.close();
        } finally {
          await database.close();
        }
      })()),
  };
}

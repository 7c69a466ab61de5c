import type { EnvVariable } from "@/lib/config/env";
import type { policyEnvVars } from "@/lib/rate-limit/policies";

/**
 * What each setting does, for the operator: the one source of docs/configuration.md
 * (`npm run docs:config`). The defaults come from the schema itself (lib/config/env.ts) and the
 * limits' descriptions from the policies table (lib/rate-limit/policies.ts), so neither is
 * written twice. `satisfies` below makes a schema variable without a description a type error.
 */

export type VariableGroup =
  | "Start and database"
  | "Sessions and tokens"
  | "Passwords and hashing"
  | "Lockout"
  | "Known devices and second factors"
  | "Limiter store"
  | "ALTCHA"
  | "Email"
  | "HTTP and the server process"
  | "Metrics and retention"
  | "Brand";

export type VariableDoc = {
  group: VariableGroup;
  /** What the variable does, in a sentence or a few. */
  description: string;
  /** Said after the schema's default, e.g. "8 h" for 28800 seconds. */
  defaultNote?: string;
  /** Replaces the schema's default where it has none of its own or it depends on the machine. */
  defaultText?: string;
};

/** The limit variables are described by the policies table; every other schema variable here. */
type DescribedVariable = Exclude<EnvVariable, (typeof policyEnvVars)[keyof typeof policyEnvVars]>;

const DERIVED = "derived from `NEXTAUTH_SECRET`";

export const variableDocs = {
  NODE_ENV: {
    group: "Start and database",
    description:
      "`production` refuses `ARGON2_PROFILE=test` and requires an `https://` `NEXTAUTH_URL`. It does not decide whether the " +
      "public development secret may be used: only `npm run dev` may, whatever `NODE_ENV` says.",
    defaultNote: "`production` under `npm start` is up to you",
  },
  DATABASE_URL: {
    group: "Start and database",
    description: "`pglite:<folder>` for PGlite elsewhere; `postgres://…` for a PostgreSQL server. Anything else stops the start.",
    defaultNote: "PGlite in `.data/pglite`",
  },
  NEXTAUTH_SECRET: {
    group: "Start and database",
    description:
      "Signs session tokens (32+ characters); the other secrets are derived from it when they are unset. Only `npm run dev` " +
      "starts without it, with a public development value.",
    defaultText: "none: required",
  },
  NEXTAUTH_URL: {
    group: "Start and database",
    description:
      "The public URL of the app: redirects and emailed links are built from it, and when it is https every cookie the app sets is " +
      "Secure and `__Host-` prefixed (`__Secure-` for the one scoped to a page; lib/http/cookies.ts). Required in production: `https://…`, so session cookies are always " +
      "Secure (plain `http://` only for localhost, and only with `ALLOW_INSECURE_COOKIES=true`). It is also the passkeys' " +
      "relying party (its host is the RP ID).",
    defaultText:
      "`npm run dev`: `http://localhost:$PORT` (`http://$HOST:$PORT` when `HOST` is not a loopback or wildcard address); else `http://localhost:3000`",
  },
  ALLOW_INSECURE_COOKIES: {
    group: "Start and database",
    description:
      "`true` lets a production build run at `http://localhost` (session cookies then lack Secure): for local tests only (the " +
      "e2e suite and the bench set it). No effect on any other host.",
  },
  LOG_LEVEL: {
    group: "Start and database",
    description: "pino level of the instance's log (`silent` in unit tests).",
  },
  DISK_MIN_FREE_MB: {
    group: "Start and database",
    description:
      "PGlite only: the start refuses, readiness answers 503 and requests that may write are answered 503, while the data folder's disk has less free (MiB); below twice this, a warning (log line, gatehouse_disk_free_bytes).",
  },
  SESSION_MAX_AGE_SECONDS: {
    group: "Sessions and tokens",
    description: "A browser session's idle timeout: it ends this long after it was last seen (the cookie lasts as long).",
    defaultNote: "8 h",
  },
  SESSION_ABSOLUTE_LIFETIME_SECONDS: {
    group: "Sessions and tokens",
    description: "A browser session's absolute lifetime from sign-in, however active. At least `SESSION_MAX_AGE_SECONDS`.",
    defaultNote: "30 days",
  },
  API_TOKEN_SECRET: {
    group: "Sessions and tokens",
    description: "Signs API access tokens (HS256; 32+ characters).",
    defaultText: DERIVED,
  },
  ACCESS_TOKEN_TTL_SECONDS: {
    group: "Sessions and tokens",
    description: "Access token lifetime.",
    defaultNote: "15 min",
  },
  REFRESH_TOKEN_TTL_DAYS: {
    group: "Sessions and tokens",
    description: "Refresh token lifetime (never past its family's end).",
  },
  REFRESH_FAMILY_LIFETIME_DAYS: {
    group: "Sessions and tokens",
    description: "An API session's (refresh family's) absolute lifetime from sign-in; rotation does not extend it.",
  },
  ARGON2_PROFILE: {
    group: "Passwords and hashing",
    description: "`owasp` = m=19456 KiB, t=2, p=1. `test` (m=1024, t=1) exists for unit tests only and is refused in production.",
  },
  HASH_CONCURRENCY: {
    group: "Passwords and hashing",
    description: "Argon2id operations at once.",
    defaultText: "the CPU count (`os.availableParallelism()`)",
  },
  HASH_QUEUE: {
    group: "Passwords and hashing",
    description: "Argon2id operations that may wait, per lane; beyond, 503 `busy`.",
  },
  HASH_TRUSTED_SLOTS: {
    group: "Passwords and hashing",
    description: "Argon2id slots only known devices may use (must be less than `HASH_CONCURRENCY`).",
    defaultText: "`1` when `HASH_CONCURRENCY` ≥ 2, else `0` (known devices then only go first)",
  },
  BREACHED_PASSWORDS_URL: {
    group: "Passwords and hashing",
    description:
      "A Pwned Passwords range service (k-anonymity: 5 hex digits of the SHA-1 leave). Set `https://api.pwnedpasswords.com` " +
      "in production. New passwords found there are refused; a sign-in with one must choose another first. Fails open.",
    defaultNote: "off",
  },
  BREACHED_PASSWORDS_TIMEOUT_MS: {
    group: "Passwords and hashing",
    description: "Longest wait for one range answer (body included) before the check fails open.",
  },
  BREACHED_PASSWORDS_CACHE_SECONDS: {
    group: "Passwords and hashing",
    description:
      "How long a fetched range is kept: a password that appears in the corpus after its range was cached is found " +
      "once the entry expires (at most this long).",
  },
  MAX_BODY_BYTES: {
    group: "HTTP and the server process",
    description: "Largest body the auth endpoints read; larger ones get 413.",
  },
  TRUSTED_PROXIES: {
    group: "HTTP and the server process",
    description:
      "IPs/CIDRs of reverse proxies whose `X-Forwarded-For` is believed (see docs/deployment.md). A right-most hop such a " +
      "proxy wrote that is no address puts the request in one shared, fail-closed bucket for the per-address limits " +
      "(`malformed-hop`), logged as `forwarded_for_malformed` and counted: alert on it.",
  },
  IPV6_PREFIX_LENGTH: {
    group: "HTTP and the server process",
    description: "IPv6 clients share a limit per network of this size.",
  },
  TRUSTED_NETWORKS: {
    group: "HTTP and the server process",
    description:
      "IPs/CIDRs of the client's own networks (its offices' egress addresses, e.g. `198.51.100.0/24`): an address there gets " +
      "`TRUSTED_NETWORK_ALLOWANCE` times every per-address limit. Never an exemption from the per-username limit, the " +
      "lockout or the hash budget. A value that is no IP or CIDR stops the start.",
  },
  TRUSTED_NETWORK_ALLOWANCE: {
    group: "HTTP and the server process",
    description: "How many times the per-address limits an address in `TRUSTED_NETWORKS` gets (1 to 100).",
  },
  CSP_MODE: {
    group: "HTTP and the server process",
    description:
      "`report-only` sends `Content-Security-Policy-Report-Only` instead of `Content-Security-Policy` (violations reported, " +
      "not blocked).",
  },
  SHUTDOWN_GRACE_MS: {
    group: "HTTP and the server process",
    description: "On SIGTERM/SIGINT, how long requests in flight may take to finish before their connections are closed (0 to 120000).",
  },
  SHUTDOWN_DELAY_MS: {
    group: "HTTP and the server process",
    description:
      "On SIGTERM/SIGINT, how long the listener keeps accepting (readiness already 503, every answer `Connection: close`) " +
      "before it closes (0 to 60000). Set it to your load balancer's readiness period; with systemd socket activation 0 is enough.",
  },
  SOCKET_FIRST_BYTE_TIMEOUT_MS: {
    group: "HTTP and the server process",
    description: "A connection that sends no byte within this long is closed (500 to 60000).",
  },
  DOOR_BUSY_SHARE: {
    group: "HTTP and the server process",
    description:
      "The door in front of Next.js: while the event loop was busier than this share (0 to 1) over the last 10 ms, requests " +
      "without a live known-device cookie wait (2 let in per 10 ms otherwise, up to 20 at once after a quiet spell); a known " +
      "device's requests go past them, and while a known device's password check runs, strangers wait for it (a quarter of the " +
      "time at most, about 130 ms at a stretch; one let in each 100 ms however busy). `1` turns the door off. Health and metrics go straight in (20 a second).",
  },
  DOOR_MAX_WAIT_MS: {
    group: "HTTP and the server process",
    description: "Longest a request waits at the door before it is answered 503 `busy` with Retry-After (100 to 25000).",
  },
  MAX_CONNECTIONS: {
    group: "HTTP and the server process",
    description:
      "Open connections `server.mjs` holds at once (1 to 1000000), lowered to the open-files limit less 128. Near it, idle " +
      "connections are closed first (the biggest holder's oldest), and a new one is refused only when every open one is busy; " +
      "the log says `connection_limit_reached`. Keep it above the proxy's upstream keep-alives plus the peak's clients.",
  },
  MAX_CONNECTIONS_PER_ADDRESS: {
    group: "HTTP and the server process",
    description:
      "Open connections one client address (an IPv6 client's /64) may hold (`TRUSTED_NETWORK_ALLOWANCE` times as many in " +
      "`TRUSTED_NETWORKS`); past it, its new connection is refused unless its stalest one has been idle 2 s, which is closed " +
      "instead. A trusted proxy's connections count only toward `MAX_CONNECTIONS`.",
    defaultText: "a quarter of `MAX_CONNECTIONS`",
  },
  RATE_LIMIT_KEY_SECRET: {
    group: "Limiter store",
    description: "HMAC key for limiter, lockout and security-log keys (32+ characters); every instance of a deployment shares it.",
    defaultText: DERIVED,
  },
  RATE_LIMIT_STORE: {
    group: "Limiter store",
    description: "`memory`, `redis` or `postgres`: where limiter and ALTCHA replay state live (see docs/deployment.md).",
  },
  REDIS_URL: {
    group: "Limiter store",
    description: "Redis for `RATE_LIMIT_STORE=redis` (`redis://` or `rediss://`).",
  },
  RATE_LIMIT_KEY_PREFIX: {
    group: "Limiter store",
    description: "Prefix of every Redis key (1–64 of `A-Z a-z 0-9 : _ . -`).",
  },
  RATE_LIMIT_STORE_TIMEOUT_MS: {
    group: "Limiter store",
    description:
      "Timeout of one call to a shared store (in PostgreSQL, from its turn in its key's queue, which also waits at most this long). " +
      "An answer that reached the socket in time is taken even when a loaded event loop reads it late.",
  },
  RATE_LIMIT_BREAKER_FAILURES: {
    group: "Limiter store",
    description: "Consecutive failures that open a policy's circuit.",
  },
  RATE_LIMIT_BREAKER_HALF_OPEN_MS: {
    group: "Limiter store",
    description: "How long an open circuit waits before a trial call.",
  },
  RATE_LIMIT_MEMORY_MAX_ENTRIES: {
    group: "Limiter store",
    description: "Bound of the in-memory limiter and replay store.",
  },
  ALTCHA_HMAC_SECRET: {
    group: "ALTCHA",
    description: "Signs ALTCHA challenges (32+ characters).",
    defaultText: DERIVED,
  },
  ALTCHA_EXPIRES_SECONDS: {
    group: "ALTCHA",
    description: "Challenge lifetime.",
  },
  ALTCHA_MAX_COUNTER: {
    group: "ALTCHA",
    description:
      "Proof-of-work size: the browser tries up to this many SHA-256 hashes (the secret target is between a tenth of it and all " +
      "of it), times 2, 4 or 8 under pressure. Tests use less.",
  },
  LOCKOUT_THRESHOLD: {
    group: "Lockout",
    description: "Failures that lock a username (for untrusted clients), or one known device.",
  },
  LOCKOUT_BASE_SECONDS: {
    group: "Lockout",
    description: "First lock; doubles with each further failure.",
  },
  LOCKOUT_MAX_SECONDS: {
    group: "Lockout",
    description: "Longest lock.",
  },
  LOCKOUT_QUIET_HOURS: {
    group: "Lockout",
    description: "A failure older than this no longer counts.",
  },
  LOCKOUT_CAP_FAILURES: {
    group: "Lockout",
    description:
      "NIST's cap: consecutive failures after which untrusted clients stay refused until the owner proves themselves (a known " +
      "device, a passkey, a reset or an unlock link); a known device that reaches it is revoked.",
  },
  LOCKOUT_CAP_HOURS: {
    group: "Lockout",
    description:
      "How long the cap holds after the last counted failure, for owners with no known device, passkey or mailbox (a known " +
      "device, a passkey, a reset or an unlock link end it at once).",
  },
  SECOND_FACTOR_LOCKOUT_THRESHOLD: {
    group: "Known devices and second factors",
    description:
      "Wrong second-step codes per account (or known device) before its own lock, which then doubles like the password's " +
      "(`LOCKOUT_BASE_SECONDS`, `LOCKOUT_MAX_SECONDS`, `LOCKOUT_QUIET_HOURS`).",
  },
  NEW_DEVICE_CONFIRMATION: {
    group: "Known devices and second factors",
    description:
      "When a right password from a browser or app with no known-device cookie waits for a 6-digit code mailed to the " +
      "owner: `at-risk` (the username failed a password check from an untrusted client in the last 24 hours, or the " +
      "password is breached), `always`, or `off`. A wrong password gets the same answer, with no mail. Known devices and " +
      "passkey sign-ins are never asked; an account with a second factor is asked too, and then for its factor (answering " +
      "mfa_required first would tell a right password from a wrong one; docs/owner-lane.md).",
  },
  SECOND_STEP_REMEMBER_DAYS: {
    group: "Known devices and second factors",
    description:
      'Days a browser that passed the second step with an authenticator code or a passkey, and ticked "Remember this ' +
      'browser", skips that step at its next password sign-ins (never after a recovery code or a mailed code). Bound to ' +
      "the known device and a secret only that browser holds; suspended while the username is under attack; ended by a " +
      'password change, a factor change, "Forget device" and "Sign out everywhere". `0` turns it off and hides the ' +
      "option (docs/decisions/0033).",
  },
  DEVICE_COOKIE_DAYS: {
    group: "Known devices and second factors",
    description: "Lifetime of a known-device cookie or token.",
  },
  DEVICE_COOKIE_SECRET: {
    group: "Known devices and second factors",
    description: "Signs device cookies (32+ characters).",
    defaultText: DERIVED,
  },
  FACTOR_SECRET: {
    group: "Known devices and second factors",
    description:
      "Seals authenticator-app secrets (AES-256-GCM) and keys recovery-code digests (32+ characters). Changing it (or " +
      "`NEXTAUTH_SECRET` while it is unset) leaves every app's codes and every recovery code unreadable while the step stays " +
      "required (logged as `factor_secret_unreadable`; `remove-factors` is the way back): set it once, explicitly, in production.",
    defaultText: DERIVED,
  },
  REQUIRE_EMAIL_VERIFICATION: {
    group: "Email",
    description:
      'Accounts sign in only once their address is confirmed. `false`: verified at registration, no email; anyone can claim a free address (docs/recovery.md, "Verification").',
  },
  EMAIL_VERIFICATION_LINK_HOURS: {
    group: "Email",
    description: "Lifetime of a verification link.",
  },
  PASSWORD_RESET_LINK_MINUTES: {
    group: "Email",
    description: "Lifetime of a reset link; the start refuses one shorter than a refill of `RATE_LIMIT_RECOVERY_MAIL`.",
  },
  UNLOCK_LINK_MINUTES: {
    group: "Email",
    description: "Lifetime of an unlock link.",
  },
  SMTP_URL: {
    group: "Email",
    description: "`smtps://…` or `smtp://…` (add `?requireTLS=true`); credentials in the URL.",
    defaultText: "unset: the outbox",
  },
  MAIL_FROM: {
    group: "Email",
    description:
      "From header of every message. A production start with `SMTP_URL` and no `MAIL_FROM` stops with an error naming it; " +
      "`no-reply@localhost` is the default only under `npm run dev`.",
    defaultText:
      "`npm run dev`: `Gatehouse <no-reply@localhost>`; the outbox otherwise: `Gatehouse <no-reply@outbox.invalid>` (either under `BRAND_NAME` when set)",
  },
  DEFAULT_LOCALE: {
    group: "Email",
    description:
      "The language of a visitor who chose none (no language cookie) and whose `Accept-Language` names none we have, and of " +
      "mails to accounts with no language recorded; a folder in `messages/` (docs/languages.md).",
  },
  I18N_PSEUDO_LOCALE: {
    group: "Email",
    description:
      "`true` adds the pseudo-locale `xx`: every catalogue string wrapped in `⟦…⟧`, for finding text that did not come through a catalogue.",
  },
  MAIL_OUTBOX_DIR: {
    group: "Email",
    description: "Where messages are written without `SMTP_URL` (`.eml` + `.json`).",
  },
  MAIL_QUEUE_MAX: {
    group: "Email",
    description: "Messages held at most (waiting or retrying); more are dropped and logged.",
  },
  MAIL_MAX_ATTEMPTS: {
    group: "Email",
    description: "Delivery attempts per message (waits double from `MAIL_RETRY_BASE_MS` up to 5 min: about an hour).",
  },
  MAIL_RETRY_BASE_MS: {
    group: "Email",
    description: "First wait before a retry.",
  },
  MAIL_SEND_TIMEOUT_MS: {
    group: "Email",
    description: "One delivery attempt's deadline (connection, TLS and the SMTP exchange).",
  },
  MAIL_SHUTDOWN_WAIT_MS: {
    group: "Email",
    description:
      "At shutdown, how long undelivered mail may still try the relay (0 to 60000); what is left is spooled in the database and " +
      "sent by the next start.",
  },
  METRICS_TOKEN: {
    group: "Metrics and retention",
    description: "32+ characters: `GET /api/metrics` answers Prometheus text to `Authorization: Bearer <token>` (401 otherwise).",
    defaultText: "unset: `/api/metrics` answers 404",
  },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    group: "Metrics and retention",
    description:
      "An OpenTelemetry collector's OTLP/HTTP base URL: every sign-in, registration, passkey and second step is then a trace with a span per layer (docs/operations.md, Traces).",
    defaultText: "unset: no traces, and no cost",
  },
  OTEL_SERVICE_NAME: {
    group: "Metrics and retention",
    description: "The traces' `service.name` (one per client instance, say `gatehouse-acme`).",
  },
  SECURITY_WEBHOOK_URL: {
    group: "Metrics and retention",
    description:
      "Where security events are POSTed, signed by the Standard Webhooks convention (docs/webhooks.md): https://, or http:// to localhost. Set with `SECURITY_WEBHOOK_SECRET`.",
    defaultText: "unset: no webhooks",
  },
  SECURITY_WEBHOOK_SECRET: {
    group: "Metrics and retention",
    description:
      "The signing secret, `whsec_` and the base64 of 24 to 64 random bytes (`whsec_$(openssl rand -base64 32)`); the receiver verifies with it.",
    defaultText: "unset: no webhooks",
  },
  DIGEST_EMAIL: {
    group: "Metrics and retention",
    description:
      "The client's contact who is mailed a weekly digest (Monday, for the week before, in UTC): sign-in attempts, refusals, locks, takeovers, the busiest attacking networks and what to check (docs/operations.md). Preview it with `npm run admin -- digest --dry-run`.",
    defaultText: "unset: no digest",
  },
  SECURITY_EVENT_RETENTION_DAYS: {
    group: "Metrics and retention",
    description: "Security events older than this are deleted by the retention job.",
  },
  REPORTS_KEEP_PER_USER: {
    group: "Metrics and retention",
    description: "Reports kept per user (the newest); older ones are deleted when a new one is built.",
  },
  RETENTION_INTERVAL_MINUTES: {
    group: "Metrics and retention",
    description: "How often the retention job runs (first run a minute after start).",
  },
  RETENTION_BATCH_ROWS: {
    group: "Metrics and retention",
    description: "Most rows the job deletes per table per run.",
  },
  BRAND_NAME: {
    group: "Brand",
    description:
      "The client's name: page titles (`Sign in · Acme`), the header, the home page, every mail (subject and signature) and the " +
      "passkey prompt. 1 to 60 characters, no control characters or `<>`.",
  },
  BRAND_LOGO: {
    group: "Brand",
    description:
      "An SVG or PNG file (at most 100,000 bytes) shown in the header, served by `GET /api/brand/logo/{hash}`. Read and checked " +
      "at start by its bytes, not its name: a PNG by its signature; an SVG must be UTF-8 with `<svg>` as its document element, " +
      "and one with `<script>`, `<foreignObject>`, an `<iframe>`, `<embed>` or `<object>`, an `on…=` handler, a `javascript:` or " +
      "`data:` URL, entity-encoded or not, a CSS `@import`, a reference outside itself (an `href`, `src` or `url()` that is not " +
      "`#id`: no remote image, no other file) or an `<!ENTITY>` is refused. Missing, too large, neither, or active content: the start stops naming `BRAND_LOGO`. " +
      "Any shape works: it is shown 28 px high in the header (32 px in mail) and as wide as its aspect ratio asks (from the PNG's size, " +
      "or the SVG's `viewBox`, else its `width` and `height`), up to 160 px (200 px in mail), where a wider wordmark is drawn lower " +
      "instead; a square mark or a wordmark up to about 5:1 shows at full height. Give an SVG a `viewBox`.",
    defaultText: "unset: the Gatehouse mark",
  },
  BRAND_COLOR: {
    group: "Brand",
    description:
      "The primary colour (`#rrggbb`): buttons, links, the focus ring and the logo tile. The light theme uses it as given and the " +
      "dark theme a lighter shade derived from it (5% steps toward white until it reads); the start stops naming `BRAND_COLOR` " +
      "when any pair is below WCAG's minimum: links on the page background and on cards 4.5:1, the button's label (white or " +
      'near-black, whichever reads better) on it 4.5:1, the focus ring 3:1. In an env file quote it (`BRAND_COLOR="#b3261e"`): ' +
      "an unquoted `#` starts a comment, and an empty value is refused rather than read as unset.",
    defaultText: "unset: the built-in blue",
  },
  SUPPORT_URL: {
    group: "Brand",
    description:
      'Where to ask for help: an `https://` page; or `SUPPORT_EMAIL`, not both. A "Support" link in the footer of every page; ' +
      "`mailBrandOf()` hands it (with the logo URL, the privacy and terms links and the colour) to mail templates.",
  },
  SUPPORT_EMAIL: {
    group: "Brand",
    description: "Where to ask for help as an address (a `mailto:` link in the footer); or `SUPPORT_URL`, not both.",
  },
  PRIVACY_URL: {
    group: "Brand",
    description: "`https://` link to the client's privacy policy, in the footer when set.",
  },
  TERMS_URL: {
    group: "Brand",
    description:
      "`https://` link to the client's terms, in the footer when set. No footer at all when none of `SUPPORT_URL`, " +
      "`SUPPORT_EMAIL`, `PRIVACY_URL` and `TERMS_URL` is set.",
  },
} as const satisfies Record<DescribedVariable, VariableDoc>;

/** Read outside the schema: by server.mjs before the app loads, and by the tests, e2e and bench. */
export type OtherVariableDoc = { readBy: string; defaultText: string; description: string };

export const otherVariableDocs: Record<string, OtherVariableDoc> = {
  PORT: { readBy: "server.mjs", defaultText: "`3000`", description: "Port `server.mjs` listens on." },
  HOST: {
    readBy: "server.mjs",
    defaultText: "`0.0.0.0`; `127.0.0.1` under `npm run dev`",
    description: "Address `server.mjs` listens on.",
  },
  LISTEN_FDS: {
    readBy: "server.mjs",
    defaultText: "unset",
    description:
      "Set by systemd socket activation (with `LISTEN_PID`): `server.mjs` serves the passed socket (fd 3) instead of `PORT`/`HOST`.",
  },
  CHROMIUM_PATH: { readBy: "the e2e suite", defaultText: "`/usr/bin/chromium`", description: "Browser for the e2e tests." },
  TEST_DATABASE_URL: {
    readBy: "the test helpers",
    defaultText: "unset",
    description:
      "PostgreSQL for the integration tests; each suite creates and drops its own database there. Under `CI=true` a " +
      "missing one fails the run instead of skipping.",
  },
  TEST_REDIS_URL: {
    readBy: "the test helpers",
    defaultText: "unset",
    description: "Redis for the store, outage and multi-instance tests (keys under a random prefix, deleted afterwards).",
  },
  E2E_PORT: { readBy: "the e2e suite", defaultText: "`3210`", description: "Port of the server the e2e tests start." },
  E2E_DATA_DIR: {
    readBy: "the e2e suite",
    defaultText: "a fresh temporary folder per run",
    description: "PGlite folder of the e2e server (set by playwright.config.ts so its workers agree).",
  },
  E2E_SECRET: { readBy: "the e2e suite", defaultText: "random per run", description: "`NEXTAUTH_SECRET` of the e2e server." },
  E2E_OUTBOX_DIR: {
    readBy: "the e2e suite",
    defaultText: "`<E2E_DATA_DIR>-outbox`",
    description: "The outbox every e2e server writes to and the tests read.",
  },
  E2E_LOCKOUT_THRESHOLD: {
    readBy: "the e2e suite",
    defaultText: "`15`",
    description: "Lockout threshold of the e2e server, above what the rate-limit tests cause.",
  },
  BENCH_REDIS_URL: {
    readBy: "the bench",
    defaultText: "`TEST_REDIS_URL`, else `redis://127.0.0.1:6379`",
    description: "Redis for the bench's limiter comparison.",
  },
  UV_THREADPOOL_SIZE: {
    readBy: "the bench",
    defaultText: "`4` (Node's default)",
    description: "Threads Argon2id runs on; the bench reads it to size its concurrency sweep.",
  },
};

import { createHmac } from "node:crypto";
import os from "node:os";
import { z } from "zod";
import { DEFAULT_MAX_CONNECTIONS, DEV_SERVER_SYMBOL, MAX_CONNECTIONS_LIMIT } from "@/lib/server-contract.mjs";
import { brandPalette, describeProblems, isHexColor, type Palette } from "@/lib/brand/contrast";
import { resolveDatabaseTarget, type DatabaseTarget } from "@/lib/db/target";
import type { LockoutPolicy } from "@/lib/lockout/rules";
import { checkLimitSpec, POLICY_NAMES, policiesFromSpecs, policyEnvVars, type Policies, type PolicyName } from "@/lib/rate-limit/policies";
import type { SessionPolicy } from "@/lib/sessions/rules";

// Public (it is in the repository), so only the development server may run with it.
const DEV_ONLY_SECRET = "gatehouse-development-secret-do-not-use-in-production";

/** https://, or http:// on this machine when insecure cookies were asked for by name (the e2e tests and the bench). */
function isProductionUrl(value: string | undefined, allowInsecureCookies: boolean): boolean {
  try {
    const url = new URL(value ?? "");
    const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
    return url.protocol === "https:" || (url.protocol === "http:" && loopback && allowInsecureCookies);
  } catch {
    return false;
  }
}

function isSmtpUrl(value: string): boolean {
  try {
    return ["smtp:", "smtps:"].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/** Running as `npm run dev` (server.mjs --dev says so on globalThis, DEV_SERVER_SYMBOL; no environment variable can): what only a developer's machine may show (the public secret, /dev/outbox), whatever NODE_ENV says. */
export function isDevServer(): boolean {
  return (globalThis as Record<symbol, unknown>)[DEV_SERVER_SYMBOL] === true;
}

/** A link the footer and mails may carry: https:// only, so a page served over TLS never links out in clear. */
const httpsLink = z.preprocess(
  (value) => (value === "" ? undefined : value),
  z
    .string()
    .refine((value) => {
      try {
        return new URL(value).protocol === "https:";
      } catch {
        return false;
      }
    }, "must be an https:// URL")
    .optional(),
);

// Branding (one instance per client): the name on every page and mail, a logo, a primary colour, footer links.
const brandFields = {
  BRAND_NAME: z
    .string()
    .trim()
    .min(1)
    .max(60)
    .regex(/^[^\p{Cc}<>]+$/u, "no control characters or angle brackets")
    .default("Gatehouse"),
  // An SVG or PNG of at most 100 kB, read and checked at start (lib/brand/logo.ts); unset: the built-in mark.
  BRAND_LOGO: z.preprocess((value) => (value === "" ? undefined : value), z.string().optional()),
  // #rrggbb; refused at start unless it reads (WCAG contrast) in the light and the dark theme.
  // Blank is refused, not taken as unset: `BRAND_COLOR=#b3261e` unquoted in an env file reads as
  // empty (# starts a comment there), and the default colour must not ship in silence.
  BRAND_COLOR: z
    .string()
    .refine((value) => value !== "", 'is empty: quote it in an env file (BRAND_COLOR="#b3261e"), where # starts a comment, or unset it')
    .refine((value) => value === "" || isHexColor(value), "must be a #rrggbb colour")
    .optional(),
  SUPPORT_URL: httpsLink,
  SUPPORT_EMAIL: z.preprocess(
    (value) => (value === "" ? undefined : value),
    z
      .string()
      .regex(/^[^\s@<>"]+@[^\s@<>"]+\.[^\s@<>"]+$/, "must be an email address")
      .optional(),
  ),
  PRIVACY_URL: httpsLink,
  TERMS_URL: httpsLink,
};

type BrandValues = { BRAND_COLOR?: string | undefined; SUPPORT_URL?: string | undefined; SUPPORT_EMAIL?: string | undefined };

/** The rules between brand variables, and the colour's contrast (lib/brand/contrast.ts). */
function checkBrand(env: BrandValues, ctx: z.RefinementCtx): void {
  if (env.SUPPORT_URL !== undefined && env.SUPPORT_EMAIL !== undefined) {
    ctx.addIssue({ code: "custom", path: ["SUPPORT_EMAIL"], message: "set SUPPORT_URL or SUPPORT_EMAIL, not both" });
  }
  if (env.BRAND_COLOR !== undefined && isHexColor(env.BRAND_COLOR)) {
    const { problems } = brandPalette(env.BRAND_COLOR);
    if (problems.length > 0) {
      ctx.addIssue({
        code: "custom",
        path: ["BRAND_COLOR"],
        message: `${env.BRAND_COLOR} cannot be read: ${describeProblems(problems)}. Choose a darker colour`,
      });
    }
  }
}

const brandSchema = z.object(brandFields).superRefine(checkBrand);

/** What is wrong with these brand variables, as "VARIABLE: problem" (`npm run instance -- new` checks its answers with it). */
export function brandProblems(values: Record<string, string | undefined>): string[] {
  const result = brandSchema.safeParse(values);
  return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
}

// A blank limit variable (as compose files write) keeps the default: it cannot mean "no limit".
const limitSpec = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === "" ? undefined : value));

// One override variable per rate-limit policy (RATE_LIMIT_SIGN_IN_USERNAME=5/15m…); the table in lib/rate-limit/policies.ts holds the defaults.
const limitSpecFields = Object.fromEntries(POLICY_NAMES.map((name) => [policyEnvVars[name], limitSpec])) as Record<
  (typeof policyEnvVars)[PolicyName],
  typeof limitSpec
>;

/**
 * Every setting Gatehouse reads, with its default, parsed once. A bad value stops the process
 * at start with a message that names the variable, instead of failing later on a request.
 * What each does, for the operator, is in lib/config/variables.ts (a type error until a new
 * variable has its entry); docs/configuration.md is generated from both (`npm run docs:config`).
 */
export const envSchema = z
  .object({
    ...limitSpecFields,
    NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
    DATABASE_URL: z.string().default(""),
    NEXTAUTH_SECRET: z.string().optional(),
    // The app's public URL. next-auth builds redirects from it and marks cookies Secure (with the
    // __Secure- prefix) when it is https; without it, production would redirect to localhost.
    NEXTAUTH_URL: z.string().optional(),
    // A browser session's idle timeout: seconds since it was last seen (the cookie lasts as long).
    SESSION_MAX_AGE_SECONDS: z.coerce
      .number()
      .int()
      .min(60)
      .max(30 * 24 * 3600)
      .default(8 * 3600),
    // A browser session's absolute lifetime from sign-in, however active it is.
    SESSION_ABSOLUTE_LIFETIME_SECONDS: z.coerce
      .number()
      .int()
      .min(60)
      .max(365 * 24 * 3600)
      .default(30 * 24 * 3600),
    // "owasp" is the only profile allowed in production; "test" exists so unit tests stay fast.
    ARGON2_PROFILE: z.enum(["owasp", "test"]).default("owasp"),
    // Largest request body the auth endpoints read, in bytes.
    MAX_BODY_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .max(1024 * 1024)
      .default(16 * 1024),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),

    // Client address: IPs or CIDRs of reverse proxies whose X-Forwarded-For is believed.
    TRUSTED_PROXIES: z.string().default(""),
    IPV6_PREFIX_LENGTH: z.coerce.number().int().min(32).max(128).default(64),

    // Keys of rate-limit and lockout records are HMAC digests under this secret (derived from
    // NEXTAUTH_SECRET when unset), so no username or address is stored or logged in clear.
    RATE_LIMIT_KEY_SECRET: z.string().min(32).optional(),
    // Where limiter and ALTCHA replay state live: this process, or shared by every instance.
    RATE_LIMIT_STORE: z.enum(["memory", "redis", "postgres"]).default("memory"),
    REDIS_URL: z
      .string()
      .default("redis://127.0.0.1:6379")
      .refine((value) => {
        try {
          return ["redis:", "rediss:"].includes(new URL(value).protocol);
        } catch {
          return false;
        }
      }, "must be a redis:// or rediss:// URL"),
    RATE_LIMIT_KEY_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9:_.-]{1,64}$/, "1 to 64 characters from A-Z a-z 0-9 : _ . -")
      .default("gatehouse:"),
    RATE_LIMIT_STORE_TIMEOUT_MS: z.coerce.number().int().min(10).max(10_000).default(250),
    RATE_LIMIT_BREAKER_FAILURES: z.coerce.number().int().min(1).max(1_000).default(5),
    RATE_LIMIT_BREAKER_HALF_OPEN_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
    RATE_LIMIT_MEMORY_MAX_ENTRIES: z.coerce.number().int().min(1_000).max(10_000_000).default(100_000),

    ALTCHA_HMAC_SECRET: z.string().min(32).optional(),
    ALTCHA_EXPIRES_SECONDS: z.coerce.number().int().min(10).max(3_600).default(300),
    // Proof-of-work size: the solver hashes up to this many times (SHA-256).
    ALTCHA_MAX_COUNTER: z.coerce.number().int().min(10).max(10_000_000).default(100_000),

    // Token API: short-lived JWT access tokens, rotating opaque refresh tokens.
    API_TOKEN_SECRET: z.string().min(32).optional(),
    ACCESS_TOKEN_TTL_SECONDS: z.coerce
      .number()
      .int()
      .min(60)
      .max(24 * 3600)
      .default(900),
    REFRESH_TOKEN_TTL_DAYS: z.coerce.number().int().min(1).max(365).default(30),
    // A refresh family's absolute lifetime from its sign-in: rotation never extends it.
    REFRESH_FAMILY_LIFETIME_DAYS: z.coerce
      .number()
      .int()
      .min(1)
      .max(3 * 365)
      .default(90),
    // GET /api/metrics answers only with `Authorization: Bearer <METRICS_TOKEN>`; unset: the endpoint is off (404).
    METRICS_TOKEN: z.string().min(32, "must be at least 32 characters").optional(),
    // Retention: a periodic job deletes rows that can no longer matter, a bounded batch per table per run.
    SECURITY_EVENT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3_650).default(90),
    REPORTS_KEEP_PER_USER: z.coerce.number().int().min(1).max(1_000).default(20),
    RETENTION_INTERVAL_MINUTES: z.coerce.number().int().min(1).max(1_440).default(10),
    RETENTION_BATCH_ROWS: z.coerce.number().int().min(10).max(100_000).default(1_000),
    // On SIGTERM/SIGINT: how long in-flight requests may finish before their connections close.
    SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).max(120_000).default(10_000),
    // server.mjs applies it (maxConnections in lib/server-contract.mjs); validated here too, so a bad value stops the start.
    MAX_CONNECTIONS: z.coerce.number().int().min(1).max(MAX_CONNECTIONS_LIMIT).default(DEFAULT_MAX_CONNECTIONS),
    // On SIGTERM/SIGINT: how long the listener keeps accepting (readiness already 503) before it closes,
    // so connections a load balancer or the kernel's backlog still hands over get an answer.
    SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(2_000),
    // A connection that sends no byte within this long is closed (headersTimeout only starts at the first byte).
    SOCKET_FIRST_BYTE_TIMEOUT_MS: z.coerce.number().int().min(500).max(60_000).default(5_000),
    // Readiness and the start refuse the embedded database's folder with less free space than this (MiB).
    DISK_MIN_FREE_MB: z.coerce.number().int().min(0).max(1_000_000).default(64),
    // Content-Security-Policy: enforced unless set to "report-only" (for trying a changed policy).
    CSP_MODE: z.enum(["report-only", "enforce"]).default("enforce"),
    // Production only: lets NEXTAUTH_URL be http:// on localhost (session cookies then lose Secure), for a local test.
    ALLOW_INSECURE_COOKIES: z.enum(["true", "false"]).default("false"),
    // Mail relay: smtps:// (TLS throughout) or smtp:// (STARTTLS; add ?requireTLS=true so it is never skipped). Unset: the outbox.
    SMTP_URL: z.preprocess(
      (value) => (value === "" ? undefined : value),
      z.string().refine(isSmtpUrl, "must be an smtp:// or smtps:// URL").optional(),
    ),
    // The From header of every message Gatehouse sends. Required for a production start with SMTP_URL;
    // otherwise the outbox's placeholder (parseConfig), never a made-up address a relay would send from.
    MAIL_FROM: z.preprocess((value) => (value === "" ? undefined : value), z.string().min(3).optional()),
    // The language of a visitor with no language cookie and no Accept-Language we have: a folder of messages/.
    DEFAULT_LOCALE: z
      .string()
      .regex(/^[a-z]{2,3}(-[A-Z]{2})?$/, "must be a language tag such as en or de (a folder of messages/)")
      .default("en"),
    // Adds the pseudo-locale xx (every catalogue string in ⟦markers⟧), for the test that finds strings outside the catalogues.
    I18N_PSEUDO_LOCALE: z.enum(["true", "false"]).default("false"),
    // Without SMTP_URL, each message is written here as .eml (+ .json, listed at /dev/outbox by `npm run dev`).
    MAIL_OUTBOX_DIR: z.string().min(1).default(".data/outbox"),
    // Messages held in memory at most (waiting or retrying); past it, new ones are dropped and logged.
    MAIL_QUEUE_MAX: z.coerce.number().int().min(1).max(1_000_000).default(1_000),
    // Attempts per message; the waits double from MAIL_RETRY_BASE_MS up to 5 minutes: 20 attempts ride out
    // a relay outage of about an hour (what still waits at shutdown is spooled and sent by the next start).
    MAIL_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(1_000).default(20),
    MAIL_RETRY_BASE_MS: z.coerce.number().int().min(10).max(300_000).default(2_000),
    // One delivery attempt's deadline (connection, TLS and the SMTP exchange).
    MAIL_SEND_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(15_000),
    // At shutdown, how long undelivered mail may still try the relay; what is left is spooled in the
    // database and sent by the next start.
    MAIL_SHUTDOWN_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(3_000),

    ...brandFields,

    LOCKOUT_THRESHOLD: z.coerce.number().int().min(1).max(100).default(5),
    LOCKOUT_BASE_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
    LOCKOUT_MAX_SECONDS: z.coerce
      .number()
      .int()
      .min(1)
      .max(7 * 86_400)
      .default(3_600),
    LOCKOUT_QUIET_HOURS: z.coerce
      .number()
      .min(0.001)
      .max(24 * 30)
      .default(12),
    // NIST SP 800-63B: consecutive failures after which untrusted clients stay refused until the
    // owner signs in from a known device (or resets the password).
    LOCKOUT_CAP_FAILURES: z.coerce.number().int().min(2).max(10_000).default(100),
    // How long the cap holds after the last counted failure, for owners with no known device.
    LOCKOUT_CAP_HOURS: z.coerce
      .number()
      .min(1)
      .max(24 * 365)
      .default(24),

    // A Pwned Passwords range service (k-anonymity: only 5 hex digits of the SHA-1 leave): new
    // passwords found there are refused, and a sign-in with one must choose another. Empty: off.
    // In production set it to https://api.pwnedpasswords.com. Fails open after the timeout.
    BREACHED_PASSWORDS_URL: z
      .string()
      .default("")
      .refine((value) => value === "" || /^https?:\/\/[^\s]+$/.test(value), "must be an http(s) URL or empty"),
    BREACHED_PASSWORDS_TIMEOUT_MS: z.coerce.number().int().min(50).max(10_000).default(1_000),
    // How long a fetched range is believed: a password leaked after its range was cached is found
    // only once the entry expires. Corpora change months apart, so a day is fresh enough.
    BREACHED_PASSWORDS_CACHE_SECONDS: z.coerce
      .number()
      .int()
      .min(1)
      .max(7 * 86_400)
      .default(86_400),

    // Known-device cookies (OWASP): how long one lasts, and the key that signs it.
    DEVICE_COOKIE_DAYS: z.coerce.number().int().min(1).max(400).default(180),
    DEVICE_COOKIE_SECRET: z.string().min(32).optional(),
    // Seals authenticator-app secrets (AES-256-GCM) and keys recovery-code digests (derived from
    // NEXTAUTH_SECRET when unset). Changing it, or NEXTAUTH_SECRET while it is unset, leaves every
    // app's code and recovery code unreadable while the step stays required (logged as
    // factor_secret_unreadable): set it once, explicitly, in production.
    FACTOR_SECRET: z.string().min(32).optional(),
    // Wrong second-step codes (authenticator app or recovery code) per account before its own
    // lock, which doubles like the password's; a known device counts on a lock of its own.
    SECOND_FACTOR_LOCKOUT_THRESHOLD: z.coerce.number().int().min(1).max(100).default(5),
    // A right password from a browser or app with no known-device cookie gets no session until the
    // code mailed to the owner is entered: "at-risk" when the username failed a password check from
    // an untrusted client in the last 24 hours or the password is in a breach corpus, "always", or
    // "off". The owner's known devices, passkeys and second factors are never asked.
    NEW_DEVICE_CONFIRMATION: z.enum(["at-risk", "always", "off"]).default("at-risk"),

    // Concurrent Argon2id operations, and how many more may wait, before a 503.
    HASH_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(os.availableParallelism()),
    HASH_QUEUE: z.coerce.number().int().min(0).max(10_000).default(8),
    // Slots only known devices may use, so a flood of untrusted attempts cannot take them all.
    // Default: 1 when HASH_CONCURRENCY is 2 or more, else 0 (known devices then only go first).
    HASH_TRUSTED_SLOTS: z.coerce.number().int().min(0).max(255).optional(),

    // Email: an account signs in only once its address is verified. "false" is for deployments
    // that verify addresses elsewhere; registration still answers alike for new and taken addresses.
    REQUIRE_EMAIL_VERIFICATION: z.enum(["true", "false"]).default("true"),
    // How long each emailed link works (a newer link of the same kind, or a password change, ends it sooner).
    EMAIL_VERIFICATION_LINK_HOURS: z.coerce
      .number()
      .int()
      .min(1)
      .max(24 * 14)
      .default(48),
    PASSWORD_RESET_LINK_MINUTES: z.coerce
      .number()
      .int()
      .min(5)
      .max(24 * 60)
      .default(30),
    UNLOCK_LINK_MINUTES: z.coerce
      .number()
      .int()
      .min(5)
      .max(24 * 60)
      .default(60),
  })
  .superRefine((env, ctx) => {
    for (const name of POLICY_NAMES) {
      const variable = policyEnvVars[name];
      const spec = env[variable];
      const problem = spec === undefined ? null : checkLimitSpec(name, spec);
      if (problem) ctx.addIssue({ code: "custom", path: [variable], message: problem });
    }
    if (env.NEXTAUTH_SECRET !== undefined && env.NEXTAUTH_SECRET.length < 32) {
      ctx.addIssue({ code: "custom", path: ["NEXTAUTH_SECRET"], message: "must be at least 32 characters" });
    }
    if (env.SESSION_ABSOLUTE_LIFETIME_SECONDS < env.SESSION_MAX_AGE_SECONDS) {
      ctx.addIssue({
        code: "custom",
        path: ["SESSION_ABSOLUTE_LIFETIME_SECONDS"],
        message: "must be at least SESSION_MAX_AGE_SECONDS (the idle timeout)",
      });
    }
    if (env.HASH_TRUSTED_SLOTS !== undefined && env.HASH_TRUSTED_SLOTS >= env.HASH_CONCURRENCY) {
      ctx.addIssue({
        code: "custom",
        path: ["HASH_TRUSTED_SLOTS"],
        message: "must be less than HASH_CONCURRENCY, or untrusted sign-ins could never run",
      });
    }
    checkBrand(env, ctx);
    if (env.NODE_ENV === "production") {
      if (env.SMTP_URL !== undefined && env.MAIL_FROM === undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["MAIL_FROM"],
          message: 'must be set when SMTP_URL is: the address your relay sends as, e.g. "Acme <no-reply@acme.example>"',
        });
      }
      if (!isProductionUrl(env.NEXTAUTH_URL, env.ALLOW_INSECURE_COOKIES === "true")) {
        ctx.addIssue({
          code: "custom",
          path: ["NEXTAUTH_URL"],
          message:
            "must be the app's https:// URL in production, so session cookies are Secure (http://localhost only with ALLOW_INSECURE_COOKIES=true)",
        });
      }
      if (env.ARGON2_PROFILE !== "owasp") {
        ctx.addIssue({ code: "custom", path: ["ARGON2_PROFILE"], message: "only 'owasp' is allowed in production" });
      }
    }
  });

/** The name of every variable the schema reads. */
export type EnvVariable = keyof z.input<typeof envSchema>;

type Secrets =
  "NEXTAUTH_SECRET" | "RATE_LIMIT_KEY_SECRET" | "ALTCHA_HMAC_SECRET" | "API_TOKEN_SECRET" | "DEVICE_COOKIE_SECRET" | "FACTOR_SECRET";

/** The settings in the units and shapes the code uses, converted here once. */
type Derived = {
  /** Where DATABASE_URL says the data lives. */
  databaseTarget: DatabaseTarget;
  /** The rate-limit policies table with the RATE_LIMIT_* overrides applied. */
  policies: Policies;
  /** The username-wide lockout that untrusted clients share (with NIST's cap). */
  lockoutPolicy: LockoutPolicy;
  /** One known device's own lockout: the same schedule, capped (the device is then revoked), no cap hold. */
  deviceLockoutPolicy: LockoutPolicy;
  sessionPolicy: SessionPolicy;
  deviceCookieLifetimeMs: number;
  refreshTokenTtlSeconds: number;
  /** A refresh family's absolute lifetime from its sign-in. */
  refreshFamilyLifetimeMs: number;
  /** BRAND_COLOR's shades for the light and dark themes; null: the stylesheet's own colours. */
  brandPalette: Palette | null;
  /** The key that signs WebAuthn challenges (derived from NEXTAUTH_SECRET for this purpose only). */
  passkeyChallengeSecret: string;
  /** The second step's own lock per account (or known device): the password's schedule, no cap. */
  secondFactorLockoutPolicy: LockoutPolicy;
  /** The key of the emailed device-confirmation codes' digests (derived from FACTOR_SECRET). */
  deviceCodeSecret: string;
};

export type AppConfig = Omit<z.infer<typeof envSchema>, Secrets | "HASH_TRUSTED_SLOTS" | "MAIL_FROM"> &
  Record<Secrets, string> & { HASH_TRUSTED_SLOTS: number; MAIL_FROM: string } & Derived;

/** `npm run dev`'s From: fine for the outbox it writes to, never a default anywhere else. */
export const DEV_MAIL_FROM = "Gatehouse <no-reply@localhost>";
/** The outbox's From outside `npm run dev` (no SMTP_URL): .invalid, which no relay delivers from (RFC 2606). */
export const OUTBOX_MAIL_FROM = "Gatehouse <no-reply@outbox.invalid>";

/** A separate key per purpose, so one leaked derived key does not give away the others. */
function derive(secret: string, purpose: string): string {
  return createHmac("sha256", secret).update(`gatehouse:${purpose}`).digest("base64url");
}

/**
 * `devServer`: running as `npm run dev` (server.mjs --dev), the one case where a missing
 * NEXTAUTH_SECRET falls back to the public development secret. Everywhere else, whatever
 * NODE_ENV says, a server without its own secret would sign sessions anyone can forge.
 */
export function parseConfig(env: Record<string, string | undefined>, options: { devServer?: boolean } = {}): AppConfig {
  const result = envSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join(".") || "environment"}: ${issue.message}`);
    throw new Error(`Invalid configuration: ${problems.join("; ")}`);
  }
  if (result.data.NEXTAUTH_SECRET === undefined && !(options.devServer ?? isDevServer())) {
    throw new Error(
      "Invalid configuration: NEXTAUTH_SECRET: must be set to at least 32 random characters (only `npm run dev` runs without it)",
    );
  }
  const data = result.data;
  let databaseTarget: DatabaseTarget;
  try {
    databaseTarget = resolveDatabaseTarget(data.DATABASE_URL);
  } catch (error) {
    throw new Error(`Invalid configuration: ${(error as Error).message}`);
  }
  const specs: Partial<Record<PolicyName, string>> = {};
  for (const name of POLICY_NAMES) specs[name] = data[policyEnvVars[name]];
  const deviceLockoutPolicy: LockoutPolicy = {
    threshold: data.LOCKOUT_THRESHOLD,
    baseLockMs: data.LOCKOUT_BASE_SECONDS * 1000,
    maxLockMs: data.LOCKOUT_MAX_SECONDS * 1000,
    quietPeriodMs: data.LOCKOUT_QUIET_HOURS * 3_600_000,
    capFailures: data.LOCKOUT_CAP_FAILURES,
  };
  const sessionSecret = result.data.NEXTAUTH_SECRET ?? DEV_ONLY_SECRET;
  return {
    ...result.data,
    databaseTarget,
    policies: policiesFromSpecs(specs),
    lockoutPolicy: { ...deviceLockoutPolicy, capHoldMs: data.LOCKOUT_CAP_HOURS * 3_600_000 },
    deviceLockoutPolicy,
    sessionPolicy: {
      idleMs: data.SESSION_MAX_AGE_SECONDS * 1000,
      absoluteMs: data.SESSION_ABSOLUTE_LIFETIME_SECONDS * 1000,
      touchEveryMs: 60_000,
    },
    deviceCookieLifetimeMs: data.DEVICE_COOKIE_DAYS * 86_400_000,
    refreshTokenTtlSeconds: data.REFRESH_TOKEN_TTL_DAYS * 86_400,
    refreshFamilyLifetimeMs: data.REFRESH_FAMILY_LIFETIME_DAYS * 86_400_000,
    NEXTAUTH_SECRET: sessionSecret,
    RATE_LIMIT_KEY_SECRET: result.data.RATE_LIMIT_KEY_SECRET ?? derive(sessionSecret, "rate-limit-keys"),
    ALTCHA_HMAC_SECRET: result.data.ALTCHA_HMAC_SECRET ?? derive(sessionSecret, "altcha"),
    API_TOKEN_SECRET: result.data.API_TOKEN_SECRET ?? derive(sessionSecret, "api-access-tokens"),
    DEVICE_COOKIE_SECRET: result.data.DEVICE_COOKIE_SECRET ?? derive(sessionSecret, "device-cookies"),
    FACTOR_SECRET: result.data.FACTOR_SECRET ?? derive(sessionSecret, "second-factors"),
    passkeyChallengeSecret: derive(sessionSecret, "passkey-challenges"),
    deviceCodeSecret: derive(result.data.FACTOR_SECRET ?? derive(sessionSecret, "second-factors"), "device-codes"),
    secondFactorLockoutPolicy: { ...deviceLockoutPolicy, threshold: data.SECOND_FACTOR_LOCKOUT_THRESHOLD, capFailures: undefined },
    brandPalette: data.BRAND_COLOR === undefined ? null : brandPalette(data.BRAND_COLOR).palette,
    MAIL_FROM: data.MAIL_FROM ?? ((options.devServer ?? isDevServer()) ? DEV_MAIL_FROM : OUTBOX_MAIL_FROM),
    HASH_TRUSTED_SLOTS: result.data.HASH_TRUSTED_SLOTS ?? (result.data.HASH_CONCURRENCY >= 2 ? 1 : 0),
  };
}

let cached: AppConfig | undefined;

export function getConfig(): AppConfig {
  cached ??= parseConfig(process.env);
  return cached;
}

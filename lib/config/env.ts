import { createHmac } from "node:crypto";
import os from "node:os";
import { z } from "zod";
import { DEFAULT_MAX_CONNECTIONS, DEV_SERVER_SYMBOL, MAX_CONNECTIONS_LIMIT } from "@/lib/server-contract.mjs";
import { brandPalette, describeProblems, isHexColor, type Palette } from "@/lib/brand/contrast";
import { resolveDatabaseTarget, type DatabaseTarget } from "@/lib/db/target";
import type { LockoutPolicy } from "@/lib/lockout/lockout-rules";
import {
  canSpendAll,
  checkLimitSpec,
  defaultLimitSpecs,
  DEVICE_CODE_WINDOW_MS,
  parseLimitSpec,
  POLICY_NAMES,
  policiesFromSpecs,
  policyEnvVars,
  type Policies,
  type PolicyName,
} from "@/lib/rate-limit/policies";
import type { SessionPolicy } from "@/lib/sessions/session-rules";

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

const RESEND_ADDRESS = policyEnvVars.deviceCodeResendAddress;
const CODE_MAIL = policyEnvVars.deviceCodeMail;
type ResendValues = { [RESEND_ADDRESS]?: string | undefined; [CODE_MAIL]?: string | undefined };

/**
 * One address's "Resend code" allowance must stay below a code's mail ceiling within the code's
 * window (its ceiling's bucket is per code), or one stranger's address spends every resend of the
 * owner's code, which the split exists to stop. Checked only when both specs parse (each names its
 * own problem otherwise).
 */
function checkResendSplit(env: ResendValues, ctx: z.RefinementCtx): void {
  const resendSpec = env[RESEND_ADDRESS] ?? defaultLimitSpecs.deviceCodeResendAddress;
  const mailSpec = env[CODE_MAIL] ?? defaultLimitSpecs.deviceCodeMail;
  if (checkLimitSpec("deviceCodeResendAddress", resendSpec) !== null || checkLimitSpec("deviceCodeMail", mailSpec) !== null) return;
  const ceiling = parseLimitSpec(mailSpec);
  if (!canSpendAll(parseLimitSpec(resendSpec), ceiling, DEVICE_CODE_WINDOW_MS)) return;
  const shown = (spec: string, name: keyof ResendValues) => (env[name] === undefined ? `${spec} (the default)` : spec);
  // One address always has its first resend, so a ceiling of one resend is spent whatever it is.
  const fix = ceiling.some(({ capacity }) => capacity < 2)
    ? `raise ${CODE_MAIL} to at least 2 in each of its limits`
    : `lower ${RESEND_ADDRESS} or raise ${CODE_MAIL}`;
  ctx.addIssue({
    code: "custom",
    path: [RESEND_ADDRESS],
    message:
      `one address could send every resend ${CODE_MAIL} allows a device code within its ${DEVICE_CODE_WINDOW_MS / 60_000} minutes ` +
      `(${RESEND_ADDRESS} ${shown(resendSpec, RESEND_ADDRESS)} against ${shown(mailSpec, CODE_MAIL)}), so a stranger's address ` +
      `could spend the owner's: ${fix}`,
  });
}

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
    // The client's own networks (its offices' egress addresses): a larger allowance per address
    // there. Parsed, like TRUSTED_PROXIES, by the client-address resolver when the instance is built.
    TRUSTED_NETWORKS: z.string().default(""),
    TRUSTED_NETWORK_ALLOWANCE: z.coerce.number().int().min(1).max(100).default(10),

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
    // The share of MAX_CONNECTIONS one client address may hold (maxConnectionsPerAddress in lib/server-contract.mjs).
    MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(1).max(MAX_CONNECTIONS_LIMIT).optional(),
    // On SIGTERM/SIGINT: how long the listener keeps accepting (readiness already 503) before it closes,
    // so connections a load balancer or the kernel's backlog still hands over get an answer.
    SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(2_000),
    // A connection that sends no byte within this long is closed (headersTimeout only starts at the first byte).
    SOCKET_FIRST_BYTE_TIMEOUT_MS: z.coerce.number().int().min(500).max(60_000).default(5_000),
    // The door (lib/http/door.ts): event-loop utilisation above which requests without a known
    // device wait before Next.js, so the owner's sign-in finds a turn free; 1 turns the door off.
    DOOR_BUSY_SHARE: z.coerce.number().min(0).max(1).default(0.7),
    // Longest such a request waits before 503 busy; below Node's 30 s request timeout.
    DOOR_MAX_WAIT_MS: z.coerce.number().int().min(100).max(25_000).default(10_000),
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

    // Security events pushed to the client's own systems (lib/webhooks/), signed by the Standard
    // Webhooks convention with the whsec_ secret. Both set, or neither (off).
    SECURITY_WEBHOOK_URL: z
      .string()
      .optional()
      .refine((value) => value === undefined || webhookUrlProblem(value) === null, {
        error: (issue) => webhookUrlProblem(String(issue.input)) ?? "invalid",
      }),
    SECURITY_WEBHOOK_SECRET: z
      .string()
      .optional()
      .refine(
        (value) => value === undefined || webhookSecretBytes(value) !== null,
        "must be whsec_ followed by the base64 of 24 to 64 random bytes (for example whsec_$(openssl rand -base64 32))",
      ),

    // The weekly digest to the client's contact (lib/digest/): one address, or unset (off).
    DIGEST_EMAIL: z.preprocess(
      (value) => (value === "" ? undefined : value),
      z.email("must be one email address, the client's contact who receives the weekly digest (or unset: no digest)").optional(),
    ),

    // Traces over OTLP/HTTP (lib/tracing/): the collector's base URL, spans going to <url>/v1/traces.
    OTEL_EXPORTER_OTLP_ENDPOINT: z
      .string()
      .optional()
      .refine((value) => value === undefined || /^https?:\/\/[^\s]+$/.test(value), "must be an http(s) URL, e.g. http://localhost:4318"),
    OTEL_SERVICE_NAME: z.string().min(1).max(100).default("gatehouse"),

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
    // "Remember this browser": a known device that passed the second step with an authenticator
    // code or a passkey skips it for this many days (the password is still asked); 0 turns it off.
    SECOND_STEP_REMEMBER_DAYS: z.coerce.number().int().min(0).max(90).default(30),

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
    checkResendSplit(env, ctx);
    checkBrand(env, ctx);
    if ((env.SECURITY_WEBHOOK_URL === undefined) !== (env.SECURITY_WEBHOOK_SECRET === undefined)) {
      ctx.addIssue({
        code: "custom",
        path: [env.SECURITY_WEBHOOK_URL === undefined ? "SECURITY_WEBHOOK_URL" : "SECURITY_WEBHOOK_SECRET"],
        message: "must be set together with SECURITY_WEBHOOK_URL and SECURITY_WEBHOOK_SECRET (or neither: no webhooks)",
      });
    }
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

/** The variables as the schema parsed them: flat, named as in the environment, in their units. */
type EnvValues = z.infer<typeof envSchema>;

/**
 * The settings the code reads: typed (booleans as booleans), grouped by what they configure, with
 * durations in milliseconds and sizes in bytes, converted here once from the variables above. The
 * few in seconds are handed to a protocol that counts in seconds (next-auth's maxAge, OAuth's
 * expires_in, ALTCHA's expiry), and their names say so.
 */
export type AppConfig = {
  nodeEnv: EnvValues["NODE_ENV"];
  /** Running as `npm run dev` (server.mjs --dev): the outbox is then the mail's intended home. */
  devServer: boolean;
  database: {
    /** Where DATABASE_URL says the data lives. */
    target: DatabaseTarget;
    /** PGlite: the start, readiness and writes refuse a data folder's disk with less free (DISK_MIN_FREE_MB; lib/db/disk-guard.ts). */
    minFreeBytes: number;
  };
  log: { level: EnvValues["LOG_LEVEL"] };
  http: {
    /** NEXTAUTH_URL: the app's public URL; undefined means http://localhost:3000 (appOrigin). */
    publicUrl: string | undefined;
    maxBodyBytes: number;
    /** TRUSTED_PROXIES as written: IPs or CIDRs, parsed by the client-address resolver. */
    trustedProxies: string;
    /** TRUSTED_NETWORKS as written: the client's own networks, parsed (and refused) as TRUSTED_PROXIES is. */
    trustedNetworks: string;
    ipv6PrefixLength: number;
    cspMode: EnvValues["CSP_MODE"];
    allowInsecureCookies: boolean;
    maxConnections: number;
    shutdownGraceMs: number;
    shutdownDelayMs: number;
    socketFirstByteTimeoutMs: number;
    /** Null: DOOR_BUSY_SHARE=1, no request waits before Next.js. */
    door: { busyShare: number; maxWaitMs: number } | null;
  };
  session: {
    /** NEXTAUTH_SECRET (only `npm run dev` runs with the public development one). */
    secret: string;
    /** The idle timeout, for next-auth and the cookie's Max-Age (both count seconds); `policy.idleMs` in ms. */
    maxAgeSeconds: number;
    policy: SessionPolicy;
  };
  tokens: {
    /** API_TOKEN_SECRET (derived from NEXTAUTH_SECRET when unset). */
    secret: string;
    accessTtlSeconds: number;
    refreshTtlMs: number;
    /** The same, for OAuth's refresh_expires_in. */
    refreshTtlSeconds: number;
    /** A refresh family's absolute lifetime from its sign-in. */
    refreshFamilyLifetimeMs: number;
  };
  passwords: {
    argon2Profile: EnvValues["ARGON2_PROFILE"];
    hashConcurrency: number;
    hashQueue: number;
    /** Argon2id slots only known devices may use. */
    hashTrustedSlots: number;
    /** A Pwned Passwords range service; "" is off. */
    breachedUrl: string;
    breachedTimeoutMs: number;
    /** How long a fetched range is kept. */
    breachedCacheMs: number;
    /** The key of wrong passwords' fingerprints in the lockout (derived from NEXTAUTH_SECRET for this purpose only). */
    wrongPasswordSecret: string;
  };
  rateLimit: {
    /** RATE_LIMIT_KEY_SECRET (derived from NEXTAUTH_SECRET when unset): keys are HMAC digests under it. */
    keySecret: string;
    store: EnvValues["RATE_LIMIT_STORE"];
    redisUrl: string;
    keyPrefix: string;
    storeTimeoutMs: number;
    breakerFailures: number;
    breakerHalfOpenMs: number;
    memoryMaxEntries: number;
    /** The rate-limit policies table with the RATE_LIMIT_* overrides applied. */
    policies: Policies;
    /** TRUSTED_NETWORK_ALLOWANCE: the address limits of an address in TRUSTED_NETWORKS, times this. */
    trustedNetworkAllowance: number;
  };
  altcha: {
    hmacSecret: string;
    /** A challenge's life; ALTCHA's expiry counts seconds. */
    expiresSeconds: number;
    maxCounter: number;
  };
  /** The username-wide lockout that untrusted clients share (with NIST's cap). */
  lockout: LockoutPolicy;
  devices: {
    /** DEVICE_COOKIE_SECRET: signs known-device cookies. */
    cookieSecret: string;
    cookieLifetimeMs: number;
    /** One known device's own lockout: the same schedule, capped (the device is then revoked), no cap hold. */
    lockout: LockoutPolicy;
    /** NEW_DEVICE_CONFIRMATION. */
    confirmation: EnvValues["NEW_DEVICE_CONFIRMATION"];
    /** SECOND_STEP_REMEMBER_DAYS in ms: how long "Remember this browser" skips the second step; 0 is off. */
    rememberMs: number;
    /** The key of the emailed device-confirmation codes' digests (derived from the factor secret). */
    codeSecret: string;
  };
  factors: {
    /** FACTOR_SECRET: seals authenticator-app secrets, keys recovery-code digests. */
    secret: string;
    /** The second step's own lock per account (or known device): the password's schedule, no cap. */
    lockout: LockoutPolicy;
  };
  passkeys: {
    /** The key that signs WebAuthn challenges (derived from NEXTAUTH_SECRET for this purpose only). */
    challengeSecret: string;
  };
  email: {
    /** REQUIRE_EMAIL_VERIFICATION: an account signs in only once its address is verified. */
    requireVerification: boolean;
    verifyLinkLifetimeMs: number;
    resetLinkLifetimeMs: number;
    unlockLinkLifetimeMs: number;
  };
  mail: {
    from: string;
    /** Unset: messages go to the outbox folder. */
    smtpUrl: string | undefined;
    outboxDir: string;
    queueMax: number;
    maxAttempts: number;
    retryBaseMs: number;
    sendTimeoutMs: number;
    shutdownWaitMs: number;
  };
  brand: {
    name: string;
    /** BRAND_LOGO: a file, read and checked at start; undefined: the built-in mark. */
    logoFile: string | undefined;
    /** BRAND_COLOR's shades for the light and dark themes; null: the stylesheet's own colours. */
    palette: Palette | null;
    supportUrl: string | undefined;
    supportEmail: string | undefined;
    privacyUrl: string | undefined;
    termsUrl: string | undefined;
  };
  i18n: {
    defaultLocale: string;
    /** Adds the pseudo-locale xx (I18N_PSEUDO_LOCALE). */
    pseudoLocale: boolean;
  };
  metrics: {
    /** GET /api/metrics's bearer token; undefined: the endpoint is off. */
    token: string | undefined;
  };
  /** Traces over OTLP/HTTP (lib/tracing/), or null when OTEL_EXPORTER_OTLP_ENDPOINT is unset. */
  tracing: { endpoint: string; serviceName: string } | null;
  /** Security webhooks (lib/webhooks/), or null when SECURITY_WEBHOOK_URL is unset. */
  webhooks: { url: string; secret: string } | null;
  /** The weekly digest's recipient (lib/digest/), or null when DIGEST_EMAIL is unset. */
  digest: { to: string } | null;
  retention: {
    securityEventMs: number;
    reportsKeepPerUser: number;
    intervalMs: number;
    batchRows: number;
  };
};

/**
 * A webhook receiver's URL: https://, or http:// to this machine (a local relay or a test). No
 * credentials in it (they would be logged with every failure) and no fragment.
 */
export function webhookUrlProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an https:// URL";
  }
  const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
  if (url.protocol !== "https:" && !(url.protocol === "http:" && loopback)) return "must be an https:// URL (http:// only to localhost)";
  if (url.username || url.password) return "must not carry a user name or password (the secret signs each request)";
  if (url.hash) return "must not have a #fragment";
  return null;
}

/** The signing key's bytes of a whsec_ secret, or null when it is not one (Standard Webhooks: 24 to 64 bytes). */
export function webhookSecretBytes(value: string): Buffer | null {
  const match = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(value);
  if (!match) return null;
  const bytes = Buffer.from(match[1]!, "base64");
  return bytes.length >= 24 && bytes.length <= 64 ? bytes : null;
}

/** `npm run dev`'s From: fine for the outbox it writes to, never a default anywhere else. */
export const DEV_MAIL_FROM = "Gatehouse <no-reply@localhost>";
/** The outbox's From outside `npm run dev` (no SMTP_URL): .invalid, which no relay delivers from (RFC 2606). */
export const OUTBOX_MAIL_FROM = "Gatehouse <no-reply@outbox.invalid>";

/**
 * A default From under the instance's BRAND_NAME (a branded instance's outbox must not say
 * Gatehouse): the name quoted when RFC 5322 needs it (a comma, a dot, a quote…).
 */
export function brandedFrom(defaultFrom: string, brandName: string): string {
  const address = defaultFrom.slice(defaultFrom.indexOf("<"));
  const phrase = /^[\p{L}\p{N} !#$%&'*+\-/=?^_`{|}~]+$/u.test(brandName) ? brandName : `"${brandName.replace(/["\\]/g, "\\$&")}"`;
  return `${phrase} ${address}`;
}

/** A separate key per purpose, so one leaked derived key does not give away the others. */
function derive(secret: string, purpose: string): string {
  return createHmac("sha256", secret).update(`gatehouse:${purpose}`).digest("base64url");
}

const SECOND_MS = 1_000;
const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

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
  const devServer = options.devServer ?? isDevServer();
  if (result.data.NEXTAUTH_SECRET === undefined && !devServer) {
    throw new Error(
      "Invalid configuration: NEXTAUTH_SECRET: must be set to at least 32 random characters (only `npm run dev` runs without it)",
    );
  }
  let databaseTarget: DatabaseTarget;
  try {
    databaseTarget = resolveDatabaseTarget(result.data.DATABASE_URL);
  } catch (error) {
    throw new Error(`Invalid configuration: ${(error as Error).message}`);
  }
  return grouped(result.data, databaseTarget, devServer);
}

/** The one mapping from the flat variables to the grouped settings, with every unit converted. */
function grouped(env: EnvValues, databaseTarget: DatabaseTarget, devServer: boolean): AppConfig {
  const specs: Partial<Record<PolicyName, string>> = {};
  for (const name of POLICY_NAMES) specs[name] = env[policyEnvVars[name]];
  const deviceLockout: LockoutPolicy = {
    threshold: env.LOCKOUT_THRESHOLD,
    baseLockMs: env.LOCKOUT_BASE_SECONDS * SECOND_MS,
    maxLockMs: env.LOCKOUT_MAX_SECONDS * SECOND_MS,
    quietPeriodMs: env.LOCKOUT_QUIET_HOURS * HOUR_MS,
    capFailures: env.LOCKOUT_CAP_FAILURES,
  };
  const sessionSecret = env.NEXTAUTH_SECRET ?? DEV_ONLY_SECRET;
  const factorSecret = env.FACTOR_SECRET ?? derive(sessionSecret, "second-factors");
  return {
    nodeEnv: env.NODE_ENV,
    devServer,
    database: { target: databaseTarget, minFreeBytes: env.DISK_MIN_FREE_MB * 1024 * 1024 },
    log: { level: env.LOG_LEVEL },
    http: {
      publicUrl: env.NEXTAUTH_URL,
      maxBodyBytes: env.MAX_BODY_BYTES,
      trustedProxies: env.TRUSTED_PROXIES,
      trustedNetworks: env.TRUSTED_NETWORKS,
      ipv6PrefixLength: env.IPV6_PREFIX_LENGTH,
      cspMode: env.CSP_MODE,
      allowInsecureCookies: env.ALLOW_INSECURE_COOKIES === "true",
      maxConnections: env.MAX_CONNECTIONS,
      shutdownGraceMs: env.SHUTDOWN_GRACE_MS,
      shutdownDelayMs: env.SHUTDOWN_DELAY_MS,
      socketFirstByteTimeoutMs: env.SOCKET_FIRST_BYTE_TIMEOUT_MS,
      door: env.DOOR_BUSY_SHARE >= 1 ? null : { busyShare: env.DOOR_BUSY_SHARE, maxWaitMs: env.DOOR_MAX_WAIT_MS },
    },
    session: {
      secret: sessionSecret,
      maxAgeSeconds: env.SESSION_MAX_AGE_SECONDS,
      policy: {
        idleMs: env.SESSION_MAX_AGE_SECONDS * SECOND_MS,
        absoluteMs: env.SESSION_ABSOLUTE_LIFETIME_SECONDS * SECOND_MS,
        touchEveryMs: MINUTE_MS,
      },
    },
    tokens: {
      secret: env.API_TOKEN_SECRET ?? derive(sessionSecret, "api-access-tokens"),
      accessTtlSeconds: env.ACCESS_TOKEN_TTL_SECONDS,
      refreshTtlMs: env.REFRESH_TOKEN_TTL_DAYS * DAY_MS,
      refreshTtlSeconds: (env.REFRESH_TOKEN_TTL_DAYS * DAY_MS) / SECOND_MS,
      refreshFamilyLifetimeMs: env.REFRESH_FAMILY_LIFETIME_DAYS * DAY_MS,
    },
    passwords: {
      argon2Profile: env.ARGON2_PROFILE,
      hashConcurrency: env.HASH_CONCURRENCY,
      hashQueue: env.HASH_QUEUE,
      hashTrustedSlots: env.HASH_TRUSTED_SLOTS ?? (env.HASH_CONCURRENCY >= 2 ? 1 : 0),
      breachedUrl: env.BREACHED_PASSWORDS_URL,
      breachedTimeoutMs: env.BREACHED_PASSWORDS_TIMEOUT_MS,
      breachedCacheMs: env.BREACHED_PASSWORDS_CACHE_SECONDS * 1000,
      wrongPasswordSecret: derive(sessionSecret, "wrong-password-fingerprints"),
    },
    rateLimit: {
      keySecret: env.RATE_LIMIT_KEY_SECRET ?? derive(sessionSecret, "rate-limit-keys"),
      store: env.RATE_LIMIT_STORE,
      redisUrl: env.REDIS_URL,
      keyPrefix: env.RATE_LIMIT_KEY_PREFIX,
      storeTimeoutMs: env.RATE_LIMIT_STORE_TIMEOUT_MS,
      breakerFailures: env.RATE_LIMIT_BREAKER_FAILURES,
      breakerHalfOpenMs: env.RATE_LIMIT_BREAKER_HALF_OPEN_MS,
      memoryMaxEntries: env.RATE_LIMIT_MEMORY_MAX_ENTRIES,
      policies: policiesFromSpecs(specs),
      trustedNetworkAllowance: env.TRUSTED_NETWORK_ALLOWANCE,
    },
    altcha: {
      hmacSecret: env.ALTCHA_HMAC_SECRET ?? derive(sessionSecret, "altcha"),
      expiresSeconds: env.ALTCHA_EXPIRES_SECONDS,
      maxCounter: env.ALTCHA_MAX_COUNTER,
    },
    lockout: { ...deviceLockout, capHoldMs: env.LOCKOUT_CAP_HOURS * HOUR_MS },
    devices: {
      cookieSecret: env.DEVICE_COOKIE_SECRET ?? derive(sessionSecret, "device-cookies"),
      cookieLifetimeMs: env.DEVICE_COOKIE_DAYS * DAY_MS,
      lockout: deviceLockout,
      confirmation: env.NEW_DEVICE_CONFIRMATION,
      rememberMs: env.SECOND_STEP_REMEMBER_DAYS * DAY_MS,
      codeSecret: derive(factorSecret, "device-codes"),
    },
    factors: {
      secret: factorSecret,
      lockout: { ...deviceLockout, threshold: env.SECOND_FACTOR_LOCKOUT_THRESHOLD, capFailures: undefined },
    },
    passkeys: { challengeSecret: derive(sessionSecret, "passkey-challenges") },
    email: {
      requireVerification: env.REQUIRE_EMAIL_VERIFICATION === "true",
      verifyLinkLifetimeMs: env.EMAIL_VERIFICATION_LINK_HOURS * HOUR_MS,
      resetLinkLifetimeMs: env.PASSWORD_RESET_LINK_MINUTES * MINUTE_MS,
      unlockLinkLifetimeMs: env.UNLOCK_LINK_MINUTES * MINUTE_MS,
    },
    mail: {
      from: env.MAIL_FROM ?? brandedFrom(devServer ? DEV_MAIL_FROM : OUTBOX_MAIL_FROM, env.BRAND_NAME),
      smtpUrl: env.SMTP_URL,
      outboxDir: env.MAIL_OUTBOX_DIR,
      queueMax: env.MAIL_QUEUE_MAX,
      maxAttempts: env.MAIL_MAX_ATTEMPTS,
      retryBaseMs: env.MAIL_RETRY_BASE_MS,
      sendTimeoutMs: env.MAIL_SEND_TIMEOUT_MS,
      shutdownWaitMs: env.MAIL_SHUTDOWN_WAIT_MS,
    },
    brand: {
      name: env.BRAND_NAME,
      logoFile: env.BRAND_LOGO,
      palette: env.BRAND_COLOR === undefined ? null : brandPalette(env.BRAND_COLOR).palette,
      supportUrl: env.SUPPORT_URL,
      supportEmail: env.SUPPORT_EMAIL,
      privacyUrl: env.PRIVACY_URL,
      termsUrl: env.TERMS_URL,
    },
    i18n: {
      defaultLocale: env.DEFAULT_LOCALE,
      pseudoLocale: env.I18N_PSEUDO_LOCALE === "true",
    },
    metrics: { token: env.METRICS_TOKEN },
    tracing:
      env.OTEL_EXPORTER_OTLP_ENDPOINT === undefined
        ? null
        : { endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: env.OTEL_SERVICE_NAME },
    webhooks:
      env.SECURITY_WEBHOOK_URL !== undefined && env.SECURITY_WEBHOOK_SECRET !== undefined
        ? { url: env.SECURITY_WEBHOOK_URL, secret: env.SECURITY_WEBHOOK_SECRET }
        : null,
    digest: env.DIGEST_EMAIL === undefined ? null : { to: env.DIGEST_EMAIL },
    retention: {
      securityEventMs: env.SECURITY_EVENT_RETENTION_DAYS * DAY_MS,
      reportsKeepPerUser: env.REPORTS_KEEP_PER_USER,
      intervalMs: env.RETENTION_INTERVAL_MINUTES * MINUTE_MS,
      batchRows: env.RETENTION_BATCH_ROWS,
    },
  };
}

let cached: AppConfig | undefined;

export function getConfig(): AppConfig {
  cached ??= parseConfig(process.env);
  return cached;
}

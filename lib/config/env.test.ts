import { describe, expect, it } from "vitest";
import { inheritedListener, listenAddress, localhostRedirect, localUrl, maxConnections } from "@/lib/server-contract.mjs";
import { parseConfig } from "./env";

const SECRET = { NEXTAUTH_SECRET: "s".repeat(32) };

describe("parseConfig", () => {
  it("has working defaults for the development server", () => {
    const config = parseConfig({}, { devServer: true });
    expect(config.passwords.argon2Profile).toBe("owasp");
    expect(config.http.maxBodyBytes).toBe(16 * 1024);
    expect(config.session.secret.length).toBeGreaterThanOrEqual(32);
  });

  it("refuses the public development secret to every server but the development server, whatever NODE_ENV says", () => {
    for (const NODE_ENV of ["production", "test", "development", undefined]) {
      const NEXTAUTH_URL = "https://login.example";
      expect(() => parseConfig({ NODE_ENV, NEXTAUTH_URL }), String(NODE_ENV)).toThrow(/NEXTAUTH_SECRET/);
      expect(() => parseConfig({ NODE_ENV, NEXTAUTH_URL, NEXTAUTH_SECRET: "too short" }, { devServer: true }), String(NODE_ENV)).toThrow(
        /NEXTAUTH_SECRET/,
      );
    }
    expect(parseConfig({ NODE_ENV: "test", ...SECRET }).session.secret).toBe(SECRET.NEXTAUTH_SECRET);
  });

  it("requires a real secret and the OWASP profile in production, naming the variable", () => {
    expect(() => parseConfig({ NODE_ENV: "production", NEXTAUTH_URL: "https://login.example" })).toThrow(/NEXTAUTH_SECRET/);
    const production = { NODE_ENV: "production", NEXTAUTH_SECRET: "s".repeat(32), NEXTAUTH_URL: "https://login.example" };
    expect(() => parseConfig({ ...production, ARGON2_PROFILE: "test" })).toThrow(/ARGON2_PROFILE/);
    expect(parseConfig(production).session.secret).toBe("s".repeat(32));
  });

  it("requires the app's https URL in production; plain http on localhost only with ALLOW_INSECURE_COOKIES=true", () => {
    const production = { NODE_ENV: "production", NEXTAUTH_SECRET: "s".repeat(32) };
    for (const NEXTAUTH_URL of [
      undefined,
      "",
      "not a url",
      "http://login.example",
      "ftp://login.example",
      "http://127.0.0.1:3210",
      "http://localhost:3000",
    ]) {
      expect(() => parseConfig({ ...production, NEXTAUTH_URL }), String(NEXTAUTH_URL)).toThrow(/NEXTAUTH_URL/);
    }
    expect(parseConfig({ ...production, NEXTAUTH_URL: "https://login.example" }).http.publicUrl).toBe("https://login.example");
    const insecure = { ...production, ALLOW_INSECURE_COOKIES: "true" };
    for (const NEXTAUTH_URL of ["http://127.0.0.1:3210", "http://localhost:3000"]) {
      expect(parseConfig({ ...insecure, NEXTAUTH_URL }).http.publicUrl).toBe(NEXTAUTH_URL);
    }
    // The opt-in is for this machine only, never for a public host.
    expect(() => parseConfig({ ...insecure, NEXTAUTH_URL: "http://login.example" })).toThrow(/NEXTAUTH_URL/);
    expect(() => parseConfig({ ...production, ALLOW_INSECURE_COOKIES: "yes", NEXTAUTH_URL: "https://login.example" })).toThrow(
      /ALLOW_INSECURE_COOKIES/,
    );
  });

  it("enforces the CSP unless report-only is asked for", () => {
    expect(parseConfig(SECRET).http.cspMode).toBe("enforce");
    expect(parseConfig({ ...SECRET, CSP_MODE: "report-only" }).http.cspMode).toBe("report-only");
    expect(() => parseConfig({ ...SECRET, CSP_MODE: "off" })).toThrow(/CSP_MODE/);
  });

  it("takes one DIGEST_EMAIL address, off when unset or empty, and refuses anything else naming it", () => {
    expect(parseConfig(SECRET).digest).toBeNull();
    expect(parseConfig({ ...SECRET, DIGEST_EMAIL: "" }).digest).toBeNull();
    expect(parseConfig({ ...SECRET, DIGEST_EMAIL: "it@client.example" }).digest).toEqual({ to: "it@client.example" });
    for (const DIGEST_EMAIL of ["not an address", "a@b.example, c@d.example", "it@"])
      expect(() => parseConfig({ ...SECRET, DIGEST_EMAIL }), DIGEST_EMAIL).toThrow(/DIGEST_EMAIL/);
  });

  it("refuses a malformed Redis URL or key prefix, naming the variable", () => {
    expect(() => parseConfig({ ...SECRET, REDIS_URL: "http://127.0.0.1:6379" })).toThrow(/REDIS_URL/);
    expect(() => parseConfig({ ...SECRET, REDIS_URL: "not a url" })).toThrow(/REDIS_URL/);
    expect(() => parseConfig({ ...SECRET, RATE_LIMIT_KEY_PREFIX: "has space" })).toThrow(/RATE_LIMIT_KEY_PREFIX/);
    expect(() => parseConfig({ ...SECRET, RATE_LIMIT_STORE: "memcached" })).toThrow(/RATE_LIMIT_STORE/);
    expect(
      parseConfig({ ...SECRET, REDIS_URL: "rediss://cache.internal:6380/2", RATE_LIMIT_KEY_PREFIX: "app-1:" }).rateLimit.keyPrefix,
    ).toBe("app-1:");
  });

  it("remembers a browser for the second step 30 days by default, 0 turns it off, a bad value names the variable", () => {
    expect(parseConfig(SECRET).devices.rememberMs).toBe(30 * 86_400_000);
    expect(parseConfig({ ...SECRET, SECOND_STEP_REMEMBER_DAYS: "0" }).devices.rememberMs).toBe(0);
    expect(parseConfig({ ...SECRET, SECOND_STEP_REMEMBER_DAYS: "7" }).devices.rememberMs).toBe(7 * 86_400_000);
    for (const bad of ["-1", "1.5", "thirty", "91"])
      expect(() => parseConfig({ ...SECRET, SECOND_STEP_REMEMBER_DAYS: bad }), bad).toThrow(/SECOND_STEP_REMEMBER_DAYS/);
  });

  it("ends sessions after 8 h idle and 30 days, refresh families after 90 days, unless told otherwise", () => {
    const config = parseConfig(SECRET);
    expect(config.session.policy).toEqual({ idleMs: 8 * 3_600_000, absoluteMs: 30 * 86_400_000, touchEveryMs: 60_000 });
    expect(config.session.maxAgeSeconds).toBe(8 * 3600);
    expect(config.tokens.refreshFamilyLifetimeMs).toBe(90 * 86_400_000);
    expect(
      parseConfig({ ...SECRET, SESSION_MAX_AGE_SECONDS: "600", SESSION_ABSOLUTE_LIFETIME_SECONDS: "600" }).session.policy.absoluteMs,
    ).toBe(600_000);
  });

  it("refuses an absolute session lifetime shorter than the idle timeout, naming the variable", () => {
    expect(() => parseConfig({ ...SECRET, SESSION_MAX_AGE_SECONDS: "7200", SESSION_ABSOLUTE_LIFETIME_SECONDS: "3600" })).toThrow(
      /SESSION_ABSOLUTE_LIFETIME_SECONDS: must be at least/,
    );
    expect(() => parseConfig({ ...SECRET, REFRESH_FAMILY_LIFETIME_DAYS: "0" })).toThrow(/REFRESH_FAMILY_LIFETIME_DAYS/);
  });

  it("refuses a resend allowance per address that could spend every mail of a code, naming both variables", () => {
    const refusal = /RATE_LIMIT_DEVICE_CODE_RESEND_ADDRESS: .*RATE_LIMIT_DEVICE_CODE_MAIL/;
    const limits = (RATE_LIMIT_DEVICE_CODE_RESEND_ADDRESS?: string, RATE_LIMIT_DEVICE_CODE_MAIL?: string) =>
      parseConfig({ ...SECRET, RATE_LIMIT_DEVICE_CODE_RESEND_ADDRESS, RATE_LIMIT_DEVICE_CODE_MAIL }).rateLimit.policies;
    // The defaults (2/1h per address, 3/1h per code) leave the owner one.
    expect(limits().deviceCodeResendAddress.algorithm).toMatchObject({ bandwidths: [{ capacity: 2 }] });
    // Equal to or above the code's ceiling, one set against the other's default or both set.
    expect(() => limits("3/1h")).toThrow(refusal);
    expect(() => limits("5/1h")).toThrow(refusal);
    expect(() => limits(undefined, "2/1h")).toThrow(refusal);
    expect(() => limits("4/1h", "4/1h")).toThrow(refusal);
    expect(() => limits(undefined, "4/1h")).not.toThrow();
    expect(() => limits("1/1h", "2/1h")).not.toThrow();
    // Different windows: a smaller burst that refills faster, and a larger burst over a longer window
    // (5 in 2 h is fewer than the code's 6 in 2 h, but all 5 at once spend its 3).
    expect(() => limits("2/10m")).toThrow(refusal);
    expect(() => limits("4/1h", "3/30m")).toThrow(refusal);
    expect(() => limits("5/2h")).toThrow(refusal);
    expect(() => limits("2/1h", "3/30m")).not.toThrow();
    expect(() => limits("1/1h", "3/2h")).not.toThrow();
    expect(() => limits("2/1h", "3/90m")).not.toThrow();
    // Several bandwidths: within its daily 10, one mail a minute outruns 3 an hour after a few minutes.
    expect(() => limits("2/1m,10/1d")).toThrow(refusal);
    expect(() => limits("1/1h,2/1d", "3/1h,4/1d")).not.toThrow();
    expect(() => limits("3/1h,10/1d", "3/1h,4/1d")).toThrow(refusal);
    // Within a code's 10 minutes, not over all time (the ceiling's bucket is per code): 2 an hour
    // from one address leave a code with 3 every 2 hours, or 10 a day, one resend for the owner.
    expect(() => limits("2/1h", "3/2h")).not.toThrow();
    expect(() => limits(undefined, "10/1d")).not.toThrow();
    expect(() => limits("1/1h,2/1d", "3/1h,2/1d")).not.toThrow();
  });

  it("says which values are defaults, and that a ceiling of one resend must be raised, not the allowance lowered", () => {
    const message = (env: Record<string, string>) => {
      try {
        parseConfig({ ...SECRET, ...env });
      } catch (error) {
        return String(error);
      }
      return "";
    };
    expect(message({ RATE_LIMIT_DEVICE_CODE_MAIL: "2/1h" })).toMatch(
      /RATE_LIMIT_DEVICE_CODE_RESEND_ADDRESS 2\/1h \(the default\) against 2\/1h\)/,
    );
    expect(message({ RATE_LIMIT_DEVICE_CODE_MAIL: "2/1h" })).toMatch(
      /lower RATE_LIMIT_DEVICE_CODE_RESEND_ADDRESS or raise RATE_LIMIT_DEVICE_CODE_MAIL/,
    );
    const one = message({ RATE_LIMIT_DEVICE_CODE_RESEND_ADDRESS: "1/1d", RATE_LIMIT_DEVICE_CODE_MAIL: "3/1h,1/5m" });
    expect(one).toMatch(/raise RATE_LIMIT_DEVICE_CODE_MAIL to at least 2 in each of its limits/);
    expect(one).not.toMatch(/lower RATE_LIMIT_DEVICE_CODE_RESEND_ADDRESS/);
  });

  it("uses no-reply@localhost only under npm run dev, and asks for MAIL_FROM in production with SMTP_URL", () => {
    expect(parseConfig(SECRET, { devServer: true }).mail.from).toBe("Gatehouse <no-reply@localhost>");
    expect(parseConfig(SECRET, { devServer: false }).mail.from).not.toContain("localhost");
    const production = {
      ...SECRET,
      NODE_ENV: "production",
      NEXTAUTH_URL: "https://login.acme.example",
      SMTP_URL: "smtps://mail.acme.example",
    };
    expect(() => parseConfig(production)).toThrow(/MAIL_FROM: must be set when SMTP_URL is/);
    expect(parseConfig({ ...production, MAIL_FROM: "Acme <no-reply@acme.example>" }).mail.from).toBe("Acme <no-reply@acme.example>");
    expect(() => parseConfig({ ...production, MAIL_FROM: "" })).toThrow(/MAIL_FROM/);
  });

  it("says a branded instance's name in the default From, quoted where RFC 5322 needs it (issue 60)", () => {
    expect(parseConfig({ ...SECRET, BRAND_NAME: "Acme" }, { devServer: false }).mail.from).toBe("Acme <no-reply@outbox.invalid>");
    expect(parseConfig({ ...SECRET, BRAND_NAME: "Acme" }, { devServer: true }).mail.from).toBe("Acme <no-reply@localhost>");
    expect(parseConfig({ ...SECRET, BRAND_NAME: 'Acme, Inc. "Login"' }, { devServer: false }).mail.from).toBe(
      '"Acme, Inc. \\"Login\\"" <no-reply@outbox.invalid>',
    );
    expect(parseConfig({ ...SECRET, BRAND_NAME: "Acme", MAIL_FROM: "Help <help@acme.example>" }).mail.from).toBe(
      "Help <help@acme.example>",
    );
  });

  it("takes DEFAULT_LOCALE as a language tag and refuses anything else, naming it", () => {
    expect(parseConfig(SECRET).i18n.defaultLocale).toBe("en");
    expect(parseConfig({ ...SECRET, DEFAULT_LOCALE: "de" }).i18n.defaultLocale).toBe("de");
    for (const DEFAULT_LOCALE of ["German", "de_DE", "../en", ""])
      expect(() => parseConfig({ ...SECRET, DEFAULT_LOCALE })).toThrow(/DEFAULT_LOCALE/);
  });

  it("writes mail to the outbox unless SMTP_URL names an smtp:// or smtps:// relay", () => {
    const config = parseConfig(SECRET);
    expect(config.mail.smtpUrl).toBeUndefined();
    expect(parseConfig({ ...SECRET, SMTP_URL: "" }).mail.smtpUrl).toBeUndefined();
    expect([
      config.mail.from,
      config.mail.outboxDir,
      config.mail.queueMax,
      config.mail.maxAttempts,
      config.mail.retryBaseMs,
      config.mail.sendTimeoutMs,
    ]).toEqual(["Gatehouse <no-reply@outbox.invalid>", ".data/outbox", 1_000, 20, 2_000, 15_000]);
    for (const SMTP_URL of ["smtps://user:pass@mail.example:465", "smtp://mail.example:587?requireTLS=true"])
      expect(parseConfig({ ...SECRET, SMTP_URL }).mail.smtpUrl).toBe(SMTP_URL);
    for (const SMTP_URL of ["http://mail.example", "mail.example:25"])
      expect(() => parseConfig({ ...SECRET, SMTP_URL })).toThrow(/SMTP_URL/);
    expect(() => parseConfig({ ...SECRET, MAIL_QUEUE_MAX: "0" })).toThrow(/MAIL_QUEUE_MAX/);
  });

  it("hands the code typed, grouped settings: booleans as booleans, durations in ms, converted once", () => {
    const defaults = parseConfig(SECRET);
    expect(defaults.email.requireVerification).toBe(true);
    expect(defaults.http.allowInsecureCookies).toBe(false);
    expect(defaults.i18n.pseudoLocale).toBe(false);
    expect(defaults.lockout).toEqual({
      threshold: 5,
      baseLockMs: 60_000,
      maxLockMs: 3_600_000,
      quietPeriodMs: 12 * 3_600_000,
      capFailures: 100,
      capHoldMs: 24 * 3_600_000,
    });
    expect(defaults.devices.lockout).not.toHaveProperty("capHoldMs");
    expect(defaults.factors.lockout).toMatchObject({ threshold: 5, capFailures: undefined });
    expect([defaults.email.verifyLinkLifetimeMs, defaults.email.resetLinkLifetimeMs, defaults.email.unlockLinkLifetimeMs]).toEqual([
      48 * 3_600_000,
      30 * 60_000,
      60 * 60_000,
    ]);
    expect([defaults.retention.securityEventMs, defaults.retention.intervalMs]).toEqual([90 * 86_400_000, 10 * 60_000]);
    expect([defaults.tokens.refreshTtlMs, defaults.tokens.refreshTtlSeconds]).toEqual([30 * 86_400_000, 30 * 86_400]);
    expect(defaults.devices.cookieLifetimeMs).toBe(180 * 86_400_000);
    expect(defaults.database.minFreeBytes).toBe(64 * 1024 * 1024);

    const set = parseConfig({
      ...SECRET,
      REQUIRE_EMAIL_VERIFICATION: "false",
      I18N_PSEUDO_LOCALE: "true",
      LOCKOUT_THRESHOLD: "3",
      LOCKOUT_BASE_SECONDS: "2",
      LOCKOUT_QUIET_HOURS: "0.5",
      SECOND_FACTOR_LOCKOUT_THRESHOLD: "4",
      PASSWORD_RESET_LINK_MINUTES: "15",
    });
    expect([set.email.requireVerification, set.i18n.pseudoLocale]).toEqual([false, true]);
    expect(set.lockout).toMatchObject({ threshold: 3, baseLockMs: 2_000, quietPeriodMs: 1_800_000 });
    expect(set.devices.lockout).toMatchObject({ threshold: 3, baseLockMs: 2_000 });
    expect(set.factors.lockout).toMatchObject({ threshold: 4, baseLockMs: 2_000 });
    expect(set.email.resetLinkLifetimeMs).toBe(15 * 60_000);
  });

  it("refuses malformed numbers, naming the variable", () => {
    expect(() => parseConfig({ ...SECRET, MAX_BODY_BYTES: "lots" })).toThrow(/MAX_BODY_BYTES/);
  });
});

describe("listenAddress (server.mjs's PORT and HOST)", () => {
  it("defaults to port 3000, on this machine only for the development server", () => {
    expect(listenAddress({}, { dev: false })).toEqual({ port: 3000, hostname: "0.0.0.0" });
    expect(listenAddress({}, { dev: true })).toEqual({ port: 3000, hostname: "127.0.0.1" });
    expect(listenAddress({ PORT: "8080", HOST: "::" }, { dev: true })).toEqual({ port: 8080, hostname: "::" });
  });

  it("names PORT when it is not a port number", () => {
    for (const PORT of ["x", "65536", "-1", "80.5"])
      expect(() => listenAddress({ PORT }, { dev: false })).toThrow(/^PORT: expected a port number/);
  });
});

describe("maxConnections (server.mjs's MAX_CONNECTIONS)", () => {
  it("defaults to 1024, the value lib/config validates too", () => {
    expect(maxConnections({})).toBe(1024);
    expect(maxConnections({ MAX_CONNECTIONS: "200" })).toBe(200);
    expect(parseConfig({ ...SECRET }).http.maxConnections).toBe(1024);
  });

  it("names MAX_CONNECTIONS when it is not a whole number from 1 to 1000000, here and at start", () => {
    for (const MAX_CONNECTIONS of ["0", "-5", "1.5", "lots", "1000001", " "]) {
      expect(() => maxConnections({ MAX_CONNECTIONS })).toThrow(/^MAX_CONNECTIONS: expected a whole number/);
      expect(() => parseConfig({ ...SECRET, MAX_CONNECTIONS })).toThrow(/MAX_CONNECTIONS/);
    }
  });
});

describe("localUrl (the development server's NEXTAUTH_URL when unset)", () => {
  it("names the port the server listens on, and a host a browser can open", () => {
    // localhost, not 127.0.0.1: browsers make passkeys for a domain name only.
    expect(localUrl(listenAddress({ PORT: "3139" }, { dev: true }))).toBe("http://localhost:3139");
    expect(localUrl(listenAddress({}, { dev: true }))).toBe("http://localhost:3000");
    expect(localUrl({ port: 3000, hostname: "0.0.0.0" })).toBe("http://localhost:3000");
    expect(localUrl({ port: 3000, hostname: "::" })).toBe("http://localhost:3000");
    expect(localUrl({ port: 8080, hostname: "::1" })).toBe("http://localhost:8080");
    expect(localUrl({ port: 8080, hostname: "192.168.1.20" })).toBe("http://192.168.1.20:8080");
    expect(localUrl({ port: 8080, hostname: "fd00::5" })).toBe("http://[fd00::5]:8080");
    expect(localUrl({ port: 8080, hostname: "gatehouse.test" })).toBe("http://gatehouse.test:8080");
  });
});

describe("localhostRedirect (the development server opened at 127.0.0.1)", () => {
  it("sends a loopback address of the same port to localhost, path and query kept", () => {
    expect(localhostRedirect("127.0.0.1:3000", "/account?x=1", "http://localhost:3000")).toBe("http://localhost:3000/account?x=1");
    expect(localhostRedirect("[::1]:3000", "/", "http://localhost:3000")).toBe("http://localhost:3000/");
    expect(localhostRedirect("127.0.0.1", "/sign-in", "http://localhost")).toBe("http://localhost/sign-in");
    // A path that looks like another host stays a path of localhost.
    expect(localhostRedirect("127.0.0.1:3000", "//evil.example/x", "http://localhost:3000")).toBe("http://localhost:3000//evil.example/x");
  });

  it("leaves every other request alone", () => {
    expect(localhostRedirect("localhost:3000", "/", "http://localhost:3000")).toBeNull();
    expect(localhostRedirect(undefined, "/", "http://localhost:3000")).toBeNull();
    expect(localhostRedirect("127.0.0.1:3001", "/", "http://localhost:3000")).toBeNull();
    expect(localhostRedirect("127.0.0.1:3000", "/", "http://192.168.1.20:3000")).toBeNull();
    expect(localhostRedirect("127.0.0.1:3000", "/", "http://dev.example:3000")).toBeNull();
    expect(localhostRedirect("127.0.0.1:3000", "/", "not a url")).toBeNull();
  });
});

describe("inheritedListener (systemd socket activation)", () => {
  it("serves fd 3 when systemd passed a socket to this process, and nothing otherwise", () => {
    expect(inheritedListener({}, 42)).toBeNull();
    expect(inheritedListener({ LISTEN_FDS: "1", LISTEN_PID: "42" }, 42)).toEqual({ fd: 3 });
    expect(inheritedListener({ LISTEN_FDS: "1" }, 42)).toEqual({ fd: 3 });
    // Meant for another process (a parent's variables inherited): not ours.
    expect(inheritedListener({ LISTEN_FDS: "1", LISTEN_PID: "41" }, 42)).toBeNull();
    expect(() => inheritedListener({ LISTEN_FDS: "0", LISTEN_PID: "42" }, 42)).toThrow(/^LISTEN_FDS: expected a count/);
  });
});

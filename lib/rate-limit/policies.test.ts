import { describe, expect, it } from "vitest";
import { parseConfig } from "@/lib/config/env";
import { defaultPolicies, formatLimitSpec, parseLimitSpec, policyEnvVars } from "@/lib/rate-limit/policies";

/** The policies lib/config/env.ts builds from these variables (the limit overrides are parsed with every other setting). */
const loadPolicies = (env: Record<string, string>) => parseConfig({ NEXTAUTH_SECRET: "s".repeat(32), ...env }).rateLimit.policies;

describe("parseLimitSpec", () => {
  it("reads several bandwidths", () => {
    expect(parseLimitSpec("5/15m,2/10s")).toEqual([
      { capacity: 5, periodMs: 900_000 },
      { capacity: 2, periodMs: 10_000 },
    ]);
  });

  it("knows every unit", () => {
    expect(parseLimitSpec("1/250ms,2/3s,4/5m,6/7h,8/9d").map((b) => b.periodMs)).toEqual([250, 3_000, 300_000, 25_200_000, 777_600_000]);
  });

  it("tolerates whitespace", () => {
    expect(parseLimitSpec("  5 / 15 m ,\t2/10s ")).toEqual(parseLimitSpec("5/15m,2/10s"));
  });

  it.each([
    ["", /empty/],
    ["   ", /empty/],
    ["5", /"5" is not understood/],
    ["5/", /"5\/" is not understood/],
    ["5/15", /"5\/15" is not understood/],
    ["5/15x", /"5\/15x" is not understood/],
    ["5/15M", /"5\/15M" is not understood/],
    ["1.5/1m", /not understood/],
    ["-1/1m", /not understood/],
    ["5/15m,", /"" is not understood/],
    ["5/15m;2/10s", /not understood/],
    ["0/1m", /count in "0\/1m" must be a whole number > 0/],
    ["5/0s", /period in "5\/0s" must be a whole number > 0/],
    ["9007199254740993/1s", /count .* must be a whole number > 0/],
    ["1/9007199254740993d", /period .* must be a whole number > 0/],
  ])("refuses %j with a message naming the input", (spec, reason) => {
    expect(() => parseLimitSpec(spec)).toThrow(`Invalid rate limit spec "${spec}"`);
    expect(() => parseLimitSpec(spec)).toThrow(reason);
  });
});

describe("formatLimitSpec", () => {
  it("writes each period in its largest whole unit", () => {
    expect(formatLimitSpec(parseLimitSpec("30/1m,10/10s,3/90s,1/1500ms,2/24h"))).toBe("30/1m,10/10s,3/90s,1/1500ms,2/1d");
  });
});

describe("defaultPolicies", () => {
  it("holds the documented limits and fail modes", () => {
    const summary = Object.values(defaultPolicies).map((policy) => ({
      name: policy.name,
      kind: policy.algorithm.kind,
      spec:
        policy.algorithm.kind === "token-bucket"
          ? formatLimitSpec(policy.algorithm.bandwidths)
          : formatLimitSpec([{ capacity: policy.algorithm.limit, periodMs: policy.algorithm.windowMs }]),
      failMode: policy.failMode,
    }));
    expect(summary).toEqual([
      { name: "signInUsername", kind: "token-bucket", spec: "5/15m", failMode: "closed" },
      { name: "signInAddress", kind: "token-bucket", spec: "30/15m", failMode: "closed" },
      { name: "signInDevice", kind: "token-bucket", spec: "20/15m", failMode: "closed" },
      { name: "newDeviceChecks", kind: "token-bucket", spec: "5/15m", failMode: "closed" },
      { name: "mailboxFirst", kind: "token-bucket", spec: "200/15m", failMode: "closed" },
      { name: "successRefunds", kind: "token-bucket", spec: "5/15m", failMode: "closed" },
      { name: "refusalRefunds", kind: "token-bucket", spec: "60/15m", failMode: "closed" },
      { name: "register", kind: "token-bucket", spec: "20/1h", failMode: "closed" },
      { name: "altchaChallenge", kind: "token-bucket", spec: "120/1m,30/10s", failMode: "open" },
      { name: "altchaChallengeDevice", kind: "token-bucket", spec: "30/1m,10/10s", failMode: "open" },
      { name: "apiToken", kind: "sliding-window", spec: "10/1m", failMode: "closed" },
      { name: "apiReports", kind: "token-bucket", spec: "6/10s", failMode: "closed" },
      { name: "apiReportDownload", kind: "token-bucket", spec: "30/1m", failMode: "open" },
      { name: "apiDownloadTokens", kind: "token-bucket", spec: "5/1h", failMode: "closed" },
      { name: "api", kind: "token-bucket", spec: "120/1m,20/1s", failMode: "open" },
      { name: "accountChanges", kind: "token-bucket", spec: "10/1m", failMode: "closed" },
      { name: "cspReport", kind: "token-bucket", spec: "60/1m", failMode: "open" },
      { name: "crossSiteRefusals", kind: "token-bucket", spec: "20/1m", failMode: "open" },
      { name: "knownDeviceLane", kind: "token-bucket", spec: "10/1h", failMode: "closed" },
      { name: "passwordForgot", kind: "token-bucket", spec: "20/1h", failMode: "closed" },
      { name: "passwordForgotUsername", kind: "token-bucket", spec: "3/1h", failMode: "closed" },
      { name: "emailLinks", kind: "token-bucket", spec: "20/15m", failMode: "closed" },
      { name: "recoveryMail", kind: "token-bucket", spec: "3/1h", failMode: "open" },
      { name: "securityNotice", kind: "token-bucket", spec: "1/15m,4/1d", failMode: "open" },
      { name: "newDeviceNotices", kind: "token-bucket", spec: "6/1h,12/1d", failMode: "open" },
      { name: "passkeyOptions", kind: "token-bucket", spec: "120/1m,30/10s", failMode: "open" },
      { name: "passkeySignIn", kind: "token-bucket", spec: "20/15m", failMode: "closed" },
      { name: "secondStep", kind: "token-bucket", spec: "30/15m", failMode: "closed" },
      { name: "secondStepAccount", kind: "token-bucket", spec: "10/15m", failMode: "closed" },
      { name: "deviceCodeMail", kind: "token-bucket", spec: "3/1h", failMode: "open" },
      { name: "deviceCodeWindow", kind: "token-bucket", spec: "1/10m", failMode: "open" },
      { name: "deviceCodeFresh", kind: "token-bucket", spec: "12/1h", failMode: "open" },
      { name: "deviceCodeResend", kind: "token-bucket", spec: "2/10m", failMode: "closed" },
      { name: "deviceCodeResendAddress", kind: "token-bucket", spec: "2/1h", failMode: "closed" },
      { name: "deviceCodeGuesses", kind: "token-bucket", spec: "10/10m", failMode: "open" },
      { name: "accountExport", kind: "token-bucket", spec: "1/5m", failMode: "closed" },
      { name: "emailChange", kind: "token-bucket", spec: "3/1h", failMode: "closed" },
      { name: "emailChangeAddress", kind: "token-bucket", spec: "3/1d", failMode: "closed" },
    ]);
    expect(defaultPolicies.apiToken.idleTtlMs).toBe(600_000);
    // Budgets a crowd of owners shares count failures only (design invariant 11).
    expect(Object.values(defaultPolicies).flatMap((policy) => (policy.countsFailuresOnly ? [policy.name] : []))).toEqual([
      "signInUsername",
      "signInAddress",
      "newDeviceChecks",
      "passkeySignIn",
      "secondStep",
      "deviceCodeGuesses",
    ]);
    for (const policy of Object.values(defaultPolicies)) expect(policy.description.length).toBeGreaterThan(20);
  });

  it("cannot be changed by a caller", () => {
    const policy = defaultPolicies.signInUsername;
    expect(() => {
      (policy as { failMode: string }).failMode = "open";
    }).toThrow(TypeError);
    const { algorithm } = policy;
    if (algorithm.kind !== "token-bucket") throw new Error("expected a token bucket");
    expect(() => {
      (algorithm.bandwidths[0] as { capacity: number }).capacity = 1_000;
    }).toThrow(TypeError);
    expect(Object.isFrozen(defaultPolicies)).toBe(true);
  });
});

describe("the RATE_LIMIT_* overrides, through parseConfig", () => {
  it("keeps the defaults without overrides", () => {
    expect(loadPolicies({ UNRELATED: "1/1s" })).toEqual(defaultPolicies);
  });

  it("lets each variable override its policy's spec", () => {
    const policies = loadPolicies({
      RATE_LIMIT_SIGN_IN_USERNAME: "3/10m",
      RATE_LIMIT_SIGN_IN_ADDRESS: "100/1h,10/1m",
      RATE_LIMIT_REGISTER: "2/1d",
      RATE_LIMIT_ALTCHA_CHALLENGE: "60/1m",
    });
    expect(policies.signInUsername.algorithm).toEqual({ kind: "token-bucket", bandwidths: [{ capacity: 3, periodMs: 600_000 }] });
    expect(policies.signInAddress.algorithm).toEqual({
      kind: "token-bucket",
      bandwidths: [
        { capacity: 100, periodMs: 3_600_000 },
        { capacity: 10, periodMs: 60_000 },
      ],
    });
    expect(policies.register.algorithm).toEqual({ kind: "token-bucket", bandwidths: [{ capacity: 2, periodMs: 86_400_000 }] });
    expect(policies.altchaChallenge.algorithm).toEqual({ kind: "token-bucket", bandwidths: [{ capacity: 60, periodMs: 60_000 }] });
    // Only the spec changes; fail modes stay where the table put them.
    expect(policies.altchaChallenge.failMode).toBe("open");
    expect(policies.signInUsername.failMode).toBe("closed");
    expect(defaultPolicies.signInUsername.algorithm).toEqual({ kind: "token-bucket", bandwidths: [{ capacity: 5, periodMs: 900_000 }] });
  });

  it("treats a blank variable as unset", () => {
    expect(loadPolicies({ RATE_LIMIT_REGISTER: "  " }).register).toEqual(defaultPolicies.register);
  });

  it("names the variable holding a bad value", () => {
    expect(() => loadPolicies({ RATE_LIMIT_REGISTER: "10 per hour" })).toThrow(
      /RATE_LIMIT_REGISTER: Invalid rate limit spec "10 per hour"/,
    );
  });

  it("reports every bad variable at once", () => {
    const load = () => loadPolicies({ RATE_LIMIT_SIGN_IN_USERNAME: "0/1m", RATE_LIMIT_ALTCHA_CHALLENGE: "x" });
    expect(load).toThrow(/RATE_LIMIT_SIGN_IN_USERNAME: .*"0\/1m".*; RATE_LIMIT_ALTCHA_CHALLENGE: .*"x"/);
  });

  it("has one variable per policy", () => {
    expect(Object.keys(policyEnvVars).sort()).toEqual(Object.keys(defaultPolicies).sort());
  });
});

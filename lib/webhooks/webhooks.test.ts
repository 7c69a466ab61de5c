import { describe, expect, it } from "vitest";
import { parseConfig } from "@/lib/config/env";
import { retryDelayMs } from "./dispatcher";
import { webhookBody, webhookOfSecurityEvent } from "./events";

const base = { NEXTAUTH_SECRET: "x".repeat(32) };
const secret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;

describe("security webhook settings", () => {
  it("takes an https:// URL and a whsec_ secret together", () => {
    expect(parseConfig({ ...base, SECURITY_WEBHOOK_URL: "https://siem.example/hooks", SECURITY_WEBHOOK_SECRET: secret }).webhooks).toEqual({
      url: "https://siem.example/hooks",
      secret,
    });
    expect(parseConfig(base).webhooks).toBeNull();
  });

  it.each([
    [{ SECURITY_WEBHOOK_URL: "not a url", SECURITY_WEBHOOK_SECRET: secret }, /SECURITY_WEBHOOK_URL: must be an https:\/\/ URL/],
    [
      { SECURITY_WEBHOOK_URL: "http://siem.example/hooks", SECURITY_WEBHOOK_SECRET: secret },
      /SECURITY_WEBHOOK_URL: .*http:\/\/ only to localhost/,
    ],
    [{ SECURITY_WEBHOOK_URL: "https://user:pw@siem.example/", SECURITY_WEBHOOK_SECRET: secret }, /SECURITY_WEBHOOK_URL: must not carry/],
    [
      { SECURITY_WEBHOOK_URL: "https://siem.example/", SECURITY_WEBHOOK_SECRET: "hunter2hunter2hunter2hunter2" },
      /SECURITY_WEBHOOK_SECRET: must be whsec_/,
    ],
    [
      { SECURITY_WEBHOOK_URL: "https://siem.example/", SECURITY_WEBHOOK_SECRET: "whsec_c2hvcnQ=" },
      /SECURITY_WEBHOOK_SECRET: must be whsec_/,
    ],
    [{ SECURITY_WEBHOOK_URL: "https://siem.example/" }, /SECURITY_WEBHOOK_SECRET: must be set together/],
    [{ SECURITY_WEBHOOK_SECRET: secret }, /SECURITY_WEBHOOK_URL: must be set together/],
  ])("refuses %j, naming the variable", (settings, message) => {
    expect(() => parseConfig({ ...base, ...settings })).toThrow(message);
  });

  it("allows http:// to this machine only", () => {
    expect(parseConfig({ ...base, SECURITY_WEBHOOK_URL: "http://127.0.0.1:9000/h", SECURITY_WEBHOOK_SECRET: secret }).webhooks?.url).toBe(
      "http://127.0.0.1:9000/h",
    );
  });
});

describe("security webhook events", () => {
  it("turns a lock, an unlock and a factor change into webhooks, and a plain sign-in into none", () => {
    expect(webhookOfSecurityEvent("locked", "u1", "203.0.113.x", "Firefox", 0)).toEqual({
      type: "account.locked",
      atMs: 0,
      data: { account: "u1", change: "locked", network: "203.0.113.x", browser: "Firefox" },
    });
    expect(webhookOfSecurityEvent("admin_unlocked", "u1", "unknown", null, 0)?.type).toBe("account.unlocked");
    expect(webhookOfSecurityEvent("totp_removed", "u1", "unknown", null, 0)?.type).toBe("account.factor_changed");
    expect(webhookOfSecurityEvent("sign_in_succeeded", "u1", "unknown", null, 0)).toBeNull();
    expect(webhookOfSecurityEvent("sign_in_failed", "u1", "unknown", null, 0)).toBeNull();
  });

  it("writes the Standard Webhooks body: type, ISO timestamp, data", () => {
    expect(JSON.parse(webhookBody({ type: "account.deleted", atMs: 0, data: { account: "u1" } }))).toEqual({
      type: "account.deleted",
      timestamp: "1970-01-01T00:00:00.000Z",
      data: { account: "u1" },
    });
  });
});

describe("retry backoff", () => {
  it("waits 5 s, 20 s, 80 s … at most 6 hours, less up to a fifth at random", () => {
    expect([1, 2, 3, 4, 8, 11].map((n) => retryDelayMs(n, () => 0))).toEqual([5_000, 20_000, 80_000, 320_000, 21_600_000, 21_600_000]);
    expect(retryDelayMs(1, () => 0.999)).toBeGreaterThanOrEqual(4_000);
  });
});

import { describe, expect, it } from "vitest";
import type { LimitResult } from "@/lib/rate-limit/limiter";
import { coarseRetryAfterMs, deviceLocked, rateLimited, untrustedLocked } from "./refusals";

describe("lockout answers", () => {
  it("round the wait up, coarser the longer it is, so the moment a lock lifts stays unknown", () => {
    expect([1, 59_000, 60_000, 61_000, 599_000].map(coarseRetryAfterMs)).toEqual([60_000, 60_000, 60_000, 120_000, 600_000]);
    expect([601_000, 1_790_000, 3_600_000].map(coarseRetryAfterMs)).toEqual([900_000, 1_800_000, 3_600_000]);
    expect(coarseRetryAfterMs(3_601_000)).toBe(4_500_000);
    for (const ms of [1, 61_000, 1_234_567, 3_599_999]) expect(coarseRetryAfterMs(ms)).toBeGreaterThanOrEqual(ms);
  });

  it("tell an untrusted client about when, in words, and that a known device still works, without lockedUntil", async () => {
    const res = untrustedLocked({ locked: true, retryAfterMs: 263_000, lockedUntilMs: 1_000_263_000, capped: false });
    expect(res.status).toBe(429);
    expect(res.headers.get("Retry-After")).toBe("300");
    expect(await res.json()).toEqual({
      error: "locked",
      message:
        "Sign-in to this account is paused after repeated failed attempts. Try again in about 5 minutes, or sign in from a device you have used before.",
      retryAfterSeconds: 300,
    });
  });

  it("say when a capped account opens again only to its owner's devices", async () => {
    const body = await untrustedLocked({ locked: true, retryAfterMs: 3_600_000, lockedUntilMs: 0, capped: true }).json();
    expect(body).toMatchObject({
      error: "locked",
      capped: true,
      message: expect.stringContaining("Sign in from a device you have used before"),
    });
    expect(body).not.toHaveProperty("lockedUntil");
  });

  it("give a known device its exact end", async () => {
    const res = deviceLocked({ locked: true, retryAfterMs: 61_500, lockedUntilMs: Date.UTC(2026, 10, 30, 12), capped: false });
    expect(res.headers.get("Retry-After")).toBe("62");
    expect(await res.json()).toMatchObject({ lockedUntil: "2026-11-30T12:00:00.000Z" });
  });
});

describe("rate-limit answers", () => {
  const result = (name: string) =>
    ({ allowed: false, remaining: 0, retryAfterMs: 29_500, storeFailed: false, policy: { name } }) as unknown as LimitResult;

  it("say when the per-username limit refused, so the page can name the email address", async () => {
    const res = rateLimited(result("signInUsername"));
    expect(res.headers.get("Retry-After")).toBe("30");
    expect(await res.json()).toEqual({
      error: "rate_limited",
      message: "Too many attempts from your network. Wait before trying again.",
      retryAfterSeconds: 30,
      scope: "username",
    });
    expect(await rateLimited(result("signInAddress")).json()).not.toHaveProperty("scope");
  });
});

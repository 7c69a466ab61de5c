import { describe, expect, it } from "vitest";
import { judgeSession, type SessionPolicy, type SessionRecord } from "./session-rules";

const HOUR = 3_600_000;
const policy: SessionPolicy = { idleMs: 8 * HOUR, absoluteMs: 30 * 24 * HOUR, touchEveryMs: 60_000 };
const T0 = Date.UTC(2026, 10, 30);
const record = (over: Partial<SessionRecord> = {}): SessionRecord => ({
  id: "a".repeat(22),
  userId: "u1",
  lastSeenAtMs: T0,
  expiresAtMs: T0 + policy.absoluteMs,
  revokedAtMs: null,
  credentialGeneration: 0,
  userCredentialGeneration: 0,
  ...over,
});

describe("judgeSession", () => {
  it("is live just after sign-in, with no touch due", () => {
    expect(judgeSession(record(), "u1", T0 + 1_000, policy)).toEqual({ live: true, touch: false });
  });

  it("asks for a touch once a minute has passed since the last one", () => {
    expect(judgeSession(record(), "u1", T0 + 60_000, policy)).toEqual({ live: true, touch: true });
  });

  it("ends a session idle for the idle timeout, not a millisecond before", () => {
    expect(judgeSession(record(), "u1", T0 + 8 * HOUR - 1, policy).live).toBe(true);
    expect(judgeSession(record(), "u1", T0 + 8 * HOUR, policy)).toEqual({ live: false, reason: "idle" });
  });

  it("ends an active session at its absolute end", () => {
    const end = T0 + policy.absoluteMs;
    expect(judgeSession(record({ lastSeenAtMs: end - 1_000 }), "u1", end - 1, policy).live).toBe(true);
    expect(judgeSession(record({ lastSeenAtMs: end - 1_000 }), "u1", end, policy)).toEqual({ live: false, reason: "expired" });
  });

  it("refuses a revoked, missing or another user's record", () => {
    expect(judgeSession(record({ revokedAtMs: T0 + 5 }), "u1", T0 + 10, policy)).toEqual({ live: false, reason: "revoked" });
    expect(judgeSession(null, "u1", T0, policy)).toEqual({ live: false, reason: "unknown" });
    expect(judgeSession(record(), "u2", T0, policy)).toEqual({ live: false, reason: "other_user" });
  });
});

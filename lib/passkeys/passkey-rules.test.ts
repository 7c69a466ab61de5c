import { describe, expect, it } from "vitest";
import { memoryReplayStore } from "@/lib/captcha/replay-store";
import { claimChallenge, issueChallenge } from "./challenges";
import { counterVerdict, isFreshAuthentication, passkeyName, passkeyObstacle } from "./passkey-rules";

const SECRET = "k".repeat(43);

describe("the signature counter (WebAuthn §7.2)", () => {
  it.each([
    [0, 0, "ok"],
    [0, 1, "ok"],
    [5, 6, "ok"],
    [5, 5, "regressed"],
    [5, 4, "regressed"],
    [5, 0, "regressed"],
  ] as const)("stored %i, reported %i: %s", (stored, reported, verdict) => {
    expect(counterVerdict(stored, reported)).toBe(verdict);
  });
});

describe("passkey names and fresh authentication", () => {
  it("takes a trimmed, single-spaced name of 1 to 60 characters without control characters", () => {
    expect(passkeyName("  Work   laptop ")).toBe("Work laptop");
    expect(passkeyName(" ")).toBeNull();
    expect(passkeyName("x".repeat(61))).toBeNull();
    expect(passkeyName("a\u0000b")).toBeNull();
    expect(passkeyName("a\u007fb")).toBeNull();
  });

  it("is fresh for 10 minutes after the authentication, and not from the future", () => {
    const atMs = 1_000_000;
    expect(isFreshAuthentication(atMs, atMs + 10 * 60_000)).toBe(true);
    expect(isFreshAuthentication(atMs, atMs + 10 * 60_000 + 1)).toBe(false);
    expect(isFreshAuthentication(atMs + 5 * 60_000, atMs)).toBe(false);
  });
});

describe("WebAuthn challenges", () => {
  it("is spent once, for its own purpose and binding, until it expires", async () => {
    const nowMs = 1_700_000_000_000;
    const replays = memoryReplayStore(100, () => nowMs);
    const challenge = issueChallenge(SECRET, "register", "session-a", nowMs, 60_000);
    expect(await claimChallenge(SECRET, replays, challenge, "register", "session-b", nowMs)).toEqual({ ok: false, reason: "forged" });
    expect(await claimChallenge(SECRET, replays, challenge, "sign_in", "session-a", nowMs)).toEqual({ ok: false, reason: "forged" });
    expect(await claimChallenge("o".repeat(43), replays, challenge, "register", "session-a", nowMs)).toEqual({
      ok: false,
      reason: "forged",
    });
    expect(await claimChallenge(SECRET, replays, challenge, "register", "session-a", nowMs + 60_000)).toEqual({
      ok: false,
      reason: "expired",
    });
    expect(await claimChallenge(SECRET, replays, challenge, "register", "session-a", nowMs)).toEqual({ ok: true });
    expect(await claimChallenge(SECRET, replays, challenge, "register", "session-a", nowMs)).toEqual({ ok: false, reason: "replayed" });
  });

  it("refuses what is not one of ours before any store call", async () => {
    const replays = memoryReplayStore();
    for (const text of ["", "a.b", "a.b.c.d", `${"A".repeat(43)}.soon.mac`, "x".repeat(600)])
      expect((await claimChallenge(SECRET, replays, text, "sign_in", "", 0)).ok).toBe(false);
  });
});

describe("where browsers make passkeys", () => {
  it("at https and at http://localhost", () => {
    for (const origin of ["https://login.example.com", "http://localhost:3000", "http://app.localhost:3000", "https://localhost"])
      expect(passkeyObstacle(origin), origin).toBeNull();
  });

  it("never at an IP address, and not on a plain http domain", () => {
    for (const origin of ["http://127.0.0.1:3000", "https://10.0.0.5", "http://[::1]:3000", "https://[fd00::5]"])
      expect(passkeyObstacle(origin), origin).toBe("ip_address");
    expect(passkeyObstacle("http://dev.example:3000")).toBe("insecure_origin");
  });
});

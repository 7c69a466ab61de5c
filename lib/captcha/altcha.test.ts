import { describe, expect, it } from "vitest";
import { solve } from "@/tests/helpers/altcha";
import { issueChallenge, verifyAltcha, type AltchaSettings } from "./altcha";
import { memoryReplayStore } from "./replay-store";

const settings: AltchaSettings = { hmacSecret: "h".repeat(32), expiresSeconds: 300, maxCounter: 50 };
const NOW = Date.now();

describe("ALTCHA", () => {
  it("accepts a solved challenge once, then refuses the replay", async () => {
    const replays = memoryReplayStore();
    const payload = await solve(await issueChallenge(settings, NOW));
    expect(await verifyAltcha(payload, settings, replays, NOW)).toMatchObject({ ok: true });
    expect(await verifyAltcha(payload, settings, replays, NOW + 1_000)).toEqual({ ok: false, reason: "replayed" });
  });

  it("refuses a missing, malformed or oversized payload", async () => {
    const replays = memoryReplayStore();
    expect(await verifyAltcha(undefined, settings, replays, NOW)).toEqual({ ok: false, reason: "missing" });
    expect(await verifyAltcha("", settings, replays, NOW)).toEqual({ ok: false, reason: "missing" });
    expect(await verifyAltcha("not base64 json", settings, replays, NOW)).toEqual({ ok: false, reason: "malformed" });
    expect(await verifyAltcha("a".repeat(5_000), settings, replays, NOW)).toEqual({ ok: false, reason: "malformed" });
  });

  it("refuses a challenge signed with another secret (forged)", async () => {
    const forged = await solve(await issueChallenge({ ...settings, hmacSecret: "x".repeat(32) }, NOW));
    expect(await verifyAltcha(forged, settings, memoryReplayStore(), NOW)).toEqual({ ok: false, reason: "invalid" });
  });

  it("refuses a wrong solution and a tampered difficulty", async () => {
    const challenge = await issueChallenge(settings, NOW);
    const decoded = JSON.parse(Buffer.from(await solve(challenge), "base64").toString());
    const wrong = { ...decoded, solution: { ...decoded.solution, counter: decoded.solution.counter + 1 } };
    expect(await verifyAltcha(Buffer.from(JSON.stringify(wrong)).toString("base64"), settings, memoryReplayStore(), NOW)).toEqual({
      ok: false,
      reason: "invalid",
    });
    const easier = { ...decoded, challenge: { ...decoded.challenge, parameters: { ...decoded.challenge.parameters, keyPrefix: "0" } } };
    expect(await verifyAltcha(Buffer.from(JSON.stringify(easier)).toString("base64"), settings, memoryReplayStore(), NOW)).toEqual({
      ok: false,
      reason: "invalid",
    });
  });

  it("refuses an expired challenge", async () => {
    const payload = await solve(await issueChallenge(settings, NOW));
    expect(await verifyAltcha(payload, settings, memoryReplayStore(), NOW + 301_000)).toEqual({ ok: false, reason: "expired" });
  });

  it("does not accept a spent solution again after the wall clock steps back 2 hours, whatever clock its store counts on", async () => {
    // A store that counts its entries' lives on a clock that does not step (as Redis's PX does).
    let steadyMs = NOW;
    const replays = memoryReplayStore(100, () => steadyMs);
    const payload = await solve(await issueChallenge(settings, NOW));
    expect(await verifyAltcha(payload, settings, replays, NOW)).toMatchObject({ ok: true });
    // 25 s on, the wall clock steps back 2 hours; a while later the store has forgotten the entry.
    steadyMs += 25_000 + 310_000;
    const steppedBack = NOW + 25_000 - 2 * 3_600_000;
    expect(await verifyAltcha(payload, settings, replays, steppedBack)).toEqual({ ok: false, reason: "expired" });
    // A step within the slack: the entry outlives the challenge's apparent validity.
    const fresh = await solve(await issueChallenge(settings, NOW));
    const steady = memoryReplayStore(100, () => steadyMs);
    steadyMs = NOW;
    expect(await verifyAltcha(fresh, settings, steady, NOW)).toMatchObject({ ok: true });
    steadyMs = NOW + 299_000;
    expect(await verifyAltcha(fresh, settings, steady, NOW + 299_000 - 4_000)).toEqual({ ok: false, reason: "replayed" });
  });

  it("does not let a forged payload spend a real challenge", async () => {
    const replays = memoryReplayStore();
    const challenge = await issueChallenge(settings, NOW);
    const real = await solve(challenge);
    const decoded = JSON.parse(Buffer.from(real, "base64").toString());
    const bogus = { ...decoded, solution: { ...decoded.solution, derivedKey: "00" } };
    expect((await verifyAltcha(Buffer.from(JSON.stringify(bogus)).toString("base64"), settings, replays, NOW)).ok).toBe(false);
    expect(await verifyAltcha(real, settings, replays, NOW)).toMatchObject({ ok: true });
  });
});

describe("memoryReplayStore", () => {
  it("remembers a spent challenge until it expires, then forgets it", async () => {
    let now = 1_000_000;
    const replays = memoryReplayStore(10, () => now);
    expect(await replays.claim("id", now + 300_000, now)).toBe(true);
    now += 299_000;
    expect(await replays.claim("id", 1_300_000, now)).toBe(false);
    now += 2_000;
    expect(await replays.claim("other", now + 300_000, now)).toBe(true);
    // Past its expiry the entry is gone (and a challenge that old is refused as expired anyway).
    expect(await replays.claim("id", now + 300_000, now)).toBe(true);
  });

  it("refuses an already expired claim", async () => {
    expect(await memoryReplayStore().claim("id", 1_000, 2_000)).toBe(false);
  });
});

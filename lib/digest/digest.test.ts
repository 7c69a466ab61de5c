import { describe, expect, it } from "vitest";
import { digestChecks, LOCKED_WORTH_A_LOOK, REFUSAL_REASONS, type DigestFigures } from "./figures";
import { DigestTally, NETWORKS_PER_FLUSH, WEEK_MS, weekStartMs } from "./tally";

const SIGN_IN = "/api/auth/callback/credentials";
const MONDAY = Date.UTC(2026, 11, 7);

describe("weekStartMs", () => {
  it("is the Monday 00:00 UTC of the week, from Monday to Sunday's last millisecond", () => {
    expect(weekStartMs(MONDAY)).toBe(MONDAY);
    expect(weekStartMs(MONDAY + 3 * 86_400_000 + 12_345)).toBe(MONDAY);
    expect(weekStartMs(MONDAY + WEEK_MS - 1)).toBe(MONDAY);
    expect(weekStartMs(MONDAY + WEEK_MS)).toBe(MONDAY + WEEK_MS);
    expect(weekStartMs(MONDAY - 1)).toBe(MONDAY - WEEK_MS);
  });
});

describe("DigestTally", () => {
  it("counts sign-in routes' outcomes, and refusals' networks shortened, never a success's", () => {
    const tally = new DigestTally(() => MONDAY + 1_000);
    tally.record(SIGN_IN, "sign_in_failed", "203.0.113.7");
    tally.record(SIGN_IN, "rate_limited", "203.0.113.9");
    tally.record(SIGN_IN, "sign_in_succeeded", "198.51.100.4");
    tally.record("/api/register", "rate_limited", "203.0.113.7");
    tally.record(SIGN_IN, "locked", null);
    tally.recordEarlyRefusal(SIGN_IN);
    const drained = tally.drain();
    const count = (name: string) => drained.find((entry) => entry.name === name)?.count;
    expect(drained.every((entry) => entry.weekStartMs === MONDAY)).toBe(true);
    expect(count("outcome:sign_in_failed")).toBe(1);
    expect(count("outcome:rate_limited")).toBe(2);
    expect(count("outcome:sign_in_succeeded")).toBe(1);
    expect(count("outcome:locked")).toBe(1);
    expect(count("network:203.0.113.x")).toBe(2);
    expect(drained.some((entry) => entry.name.includes("198.51.100"))).toBe(false);
    expect(tally.drain()).toEqual([]);
  });

  it("remembers a bounded number of networks per flush: a flood from many counts the rest as other", () => {
    const tally = new DigestTally(() => MONDAY);
    for (let i = 0; i < NETWORKS_PER_FLUSH + 300; i++) tally.record(SIGN_IN, "rate_limited", `10.${i >> 8}.${i & 255}.1`);
    tally.record(SIGN_IN, "rate_limited", "10.0.0.1");
    const drained = tally.drain();
    expect(drained.filter((entry) => entry.name.startsWith("network:") && entry.name !== "network:other")).toHaveLength(NETWORKS_PER_FLUSH);
    expect(drained.find((entry) => entry.name === "network:other")?.count).toBe(300);
    expect(drained.find((entry) => entry.name === "network:10.0.0.x")?.count).toBe(2);
  });

  it("gives back what a failed flush could not write", () => {
    const tally = new DigestTally(() => MONDAY);
    tally.record(SIGN_IN, "busy", "203.0.113.7");
    const drained = tally.drain();
    tally.restore(drained);
    tally.record(SIGN_IN, "busy", "203.0.113.7");
    expect(tally.drain().find((entry) => entry.name === "outcome:busy")?.count).toBe(2);
  });
});

describe("digestChecks", () => {
  const quiet: DigestFigures = {
    weekStartMs: MONDAY,
    attempts: 40,
    refusals: Object.fromEntries(REFUSAL_REASONS.map((reason) => [reason, 0])) as DigestFigures["refusals"],
    accountsLocked: 0,
    newDeviceConfirmations: 2,
    takenOver: 0,
    networks: [],
  };

  it("asks for nothing in a quiet week", () => {
    expect(digestChecks(quiet)).toEqual([]);
  });

  it("names takeovers first, then outages, a busy server, many locks and a network behind most refusals", () => {
    const checks = digestChecks({
      ...quiet,
      takenOver: 1,
      accountsLocked: LOCKED_WORTH_A_LOOK,
      refusals: { ...quiet.refusals, unavailable: 3, busy: 5, rate_limited: 400 },
      networks: [{ network: "203.0.113.x", count: 300 }],
    });
    expect(checks.map((check) => check.kind)).toEqual(["taken_over", "unavailable", "busy", "locked", "network"]);
  });

  it("does not name a network that is not behind most refusals", () => {
    const figures = { ...quiet, refusals: { ...quiet.refusals, rate_limited: 1_000 }, networks: [{ network: "203.0.113.x", count: 300 }] };
    expect(digestChecks(figures)).toEqual([]);
  });
});

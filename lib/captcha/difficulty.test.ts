import { describe, expect, it } from "vitest";
import { challengeLevel, levelDue, MAX_LEVEL, maxCounterAt, meetsLevel, PRESSURE_GRACE_MS } from "./difficulty";

describe("challenge difficulty", () => {
  const calm = { budgetPressure: 0, addressFailures: 0, knownDevice: false };

  it("is the base size while idle", () => {
    expect(challengeLevel(calm)).toBe(0);
    expect(maxCounterAt(100_000, 0)).toBe(100_000);
  });

  it("doubles per level with the budget's recent pressure", () => {
    expect([0.24, 0.25, 0.5, 0.75, 1].map((budgetPressure) => challengeLevel({ ...calm, budgetPressure }))).toEqual([0, 1, 2, 3, 3]);
    expect([1, 2, 3].map((level) => maxCounterAt(100_000, level))).toEqual([200_000, 400_000, 800_000]);
  });

  it("rises with the address's recent failures, taking the higher of the two signals", () => {
    expect([2, 3, 10, 30, 1_000].map((addressFailures) => challengeLevel({ ...calm, addressFailures }))).toEqual([0, 1, 2, 3, 3]);
    expect(challengeLevel({ ...calm, budgetPressure: 0.3, addressFailures: 12 })).toBe(2);
  });

  it("stays at the base size for a known device, under any pressure", () => {
    expect(challengeLevel({ budgetPressure: 1, addressFailures: 1_000, knownDevice: true })).toBe(0);
  });

  it("never goes past the maximum", () => {
    expect(maxCounterAt(100_000, 99)).toBe(100_000 * 2 ** MAX_LEVEL);
  });
});

describe("the level a solution owes when it is used", () => {
  const NOW = 1_800_000_000_000;
  const calm = { budgetPressure: 0, addressFailures: 0, knownDevice: false };
  const terms = (level: number, pressureLevel: number, ageMs = 0) => ({ level, pressureLevel, issuedAtMs: NOW - ageMs });

  it("owes the budget's level now, not the one at issue", () => {
    const due = levelDue({ ...calm, budgetPressure: 0.8 });
    expect(due).toEqual({ knownDevice: false, addressLevel: 0, pressureLevel: 3 });
    expect(meetsLevel(due, terms(3, 3), NOW)).toBe(true);
    // Fetched in a quiet moment and kept: refused while the pressure lasts, taken once it is over.
    expect(meetsLevel(due, terms(0, 0, PRESSURE_GRACE_MS + 1), NOW)).toBe(false);
    expect(meetsLevel(levelDue(calm), terms(0, 0, PRESSURE_GRACE_MS + 1), NOW)).toBe(true);
  });

  it("lets a challenge issued at the level then due stand while a person solves it", () => {
    const due = levelDue({ ...calm, budgetPressure: 0.8 });
    expect(meetsLevel(due, terms(1, 1, PRESSURE_GRACE_MS), NOW)).toBe(true);
    expect(meetsLevel(due, terms(1, 1, PRESSURE_GRACE_MS + 1), NOW)).toBe(false);
  });

  it("gives no grace to a challenge a device cookie cheapened, unless the device is this account's", () => {
    const due = levelDue({ ...calm, budgetPressure: 0.8 });
    expect(meetsLevel(due, terms(0, 3), NOW)).toBe(false);
    expect(meetsLevel({ ...due, knownDevice: true }, terms(0, 3), NOW)).toBe(true);
  });

  it("always owes the address's level, grace or not", () => {
    const due = levelDue({ ...calm, addressFailures: 10 });
    expect(meetsLevel(due, terms(1, 1), NOW)).toBe(false);
    expect(meetsLevel(due, terms(2, 0), NOW)).toBe(true);
  });
});

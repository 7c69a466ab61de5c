import { describe, expect, it } from "vitest";
import { challengeLevel, MAX_LEVEL, maxCounterAt } from "./difficulty";

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

import { describe, expect, it } from "vitest";
import { DataHealth, isDataDamage } from "./data-health";

const damaged = () => Object.assign(new Error("invalid page in block 1 of relation base/5/16402"), { code: "XX001" });
const away = () => Object.assign(new Error("Can't reach database server at 127.0.0.1:5432"), { code: "P1001" });

describe("isDataDamage", () => {
  it("tells a damaged page from a database that is away", () => {
    expect(isDataDamage(damaged())).toBe(true);
    // Prisma's adapter error carries the driver's in meta, with only the message left.
    expect(
      isDataDamage({
        message: "Invalid invocation",
        meta: { driverAdapterError: { cause: { message: 'index "User_email_key" contains unexpected zero page at block 1' } } },
      }),
    ).toBe(true);
    expect(isDataDamage(away())).toBe(false);
    expect(isDataDamage(new TypeError("x is undefined"))).toBe(false);
  });
});

describe("DataHealth", () => {
  it("turns unfit at 5 damaged answers making a fifth of the window, and stays so once they age out", () => {
    let now = 1_000_000;
    const health = new DataHealth(() => now);
    for (let i = 0; i < 16; i++) health.answered();
    for (let i = 0; i < 4; i++) {
      health.answered();
      health.failed(damaged());
    }
    // 4 damaged of 20: fewer than 5.
    expect(health.report()).toMatchObject({ ok: true, answered: 20, damaged: 4 });
    health.answered();
    health.failed(damaged());
    expect(health.report()).toMatchObject({ ok: false, cause: "damaged_data_failing_requests", damaged: 5, answered: 21 });
    expect(health.report().detail).toMatch(/invalid page in block 1/);
    // Readiness 503 stops the traffic, so the window empties; the damage is still there.
    now += 61_000;
    expect(health.report()).toMatchObject({ ok: false, cause: "damaged_data_failing_requests", answered: 0, damaged: 0 });
  });

  it("turns with the failures, before any readiness check asks", () => {
    const health = new DataHealth(() => 0);
    for (let i = 0; i < 5; i++) health.failed(damaged());
    expect(health.report()).toMatchObject({ ok: false });
  });

  it("forgets a few damaged answers once they age out, below the threshold", () => {
    let now = 0;
    const health = new DataHealth(() => now);
    for (let i = 0; i < 4; i++) health.failed(damaged());
    now += 61_000;
    health.failed(damaged());
    expect(health.report()).toMatchObject({ ok: true, damaged: 1 });
  });

  it("ignores outages that heal, and a few damaged answers among many good ones", () => {
    const now = 5_000;
    const health = new DataHealth(() => now);
    for (let i = 0; i < 50; i++) {
      health.answered();
      health.failed(away());
    }
    expect(health.report().ok).toBe(true);
    for (let i = 0; i < 6; i++) health.failed(damaged());
    // 6 of 50: under a fifth.
    expect(health.report()).toMatchObject({ ok: true, damaged: 6 });
  });
});

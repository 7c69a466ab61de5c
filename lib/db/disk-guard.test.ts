import { describe, expect, it } from "vitest";
import { DiskGuard, diskState } from "./disk-guard";

const MiB = 1024 * 1024;

describe("diskState", () => {
  it("warns below twice DISK_MIN_FREE_MB and refuses below it", () => {
    expect(diskState(200 * MiB, 64 * MiB)).toBe("ok");
    expect(diskState(128 * MiB, 64 * MiB)).toBe("ok");
    expect(diskState(127 * MiB, 64 * MiB)).toBe("low");
    expect(diskState(64 * MiB, 64 * MiB)).toBe("low");
    expect(diskState(63 * MiB, 64 * MiB)).toBe("full");
  });
});

describe("DiskGuard", () => {
  it("logs each crossing once, warning before refusing, and reports every reading", async () => {
    let free = 500 * MiB;
    const lines: { level: string; event: string }[] = [];
    const log = {
      info: (entry: object) => lines.push({ level: "info", ...(entry as { event: string }) }),
      warn: (entry: object) => lines.push({ level: "warn", ...(entry as { event: string }) }),
      error: (entry: object) => lines.push({ level: "error", ...(entry as { event: string }) }),
    };
    const readings: number[] = [];
    const guard = new DiskGuard(
      "/data",
      64 * MiB,
      log,
      (reading) => readings.push(reading.freeBytes),
      async () => free,
    );
    await guard.sample();
    expect(lines).toEqual([]);
    free = 100 * MiB;
    await guard.sample();
    await guard.sample();
    expect(guard.refusing()).toBe(false);
    expect(lines.map((line) => `${line.level} ${line.event}`)).toEqual(["warn disk_space_low"]);
    free = 10 * MiB;
    await guard.sample();
    expect(guard.refusing()).toBe(true);
    free = 300 * MiB;
    await guard.sample();
    expect(guard.refusing()).toBe(false);
    expect(lines.map((line) => `${line.level} ${line.event}`)).toEqual([
      "warn disk_space_low",
      "error disk_space_refusing",
      "info disk_space_ok",
    ]);
    expect(readings).toEqual([500, 100, 100, 10, 300].map((n) => n * MiB));
  });

  it("counts a folder it cannot measure as full", async () => {
    const quiet = { info: () => {}, warn: () => {}, error: () => {} };
    const guard = new DiskGuard(
      "/gone",
      1,
      quiet,
      () => {},
      () => Promise.reject(new Error("ENOENT")),
    );
    expect((await guard.sample()).state).toBe("full");
    expect(guard.refusing()).toBe(true);
  });
});

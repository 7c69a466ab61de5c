import { afterEach, describe, expect, it, vi } from "vitest";
import { startPeriodic } from "./jobs";

describe("startPeriodic", () => {
  afterEach(() => vi.useRealTimers());

  it("runs at the first delay and every interval, never two runs at once, on through failures, until stopped", async () => {
    vi.useFakeTimers();
    let release!: () => void;
    const errors: unknown[] = [];
    let runs = 0;
    const job = startPeriodic(
      () => {
        runs += 1;
        if (runs === 2) return Promise.reject(new Error("database down"));
        return new Promise<void>((resolve) => (release = resolve));
      },
      { intervalMs: 1_000, firstAfterMs: 100, onError: (error) => errors.push(error) },
    );
    await vi.advanceTimersByTimeAsync(100);
    expect(runs).toBe(1);
    // The first run is still going at the interval: no second one is stacked on it.
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs).toBe(1);
    release();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs).toBe(2);
    expect(errors).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs).toBe(3);
    const stopped = job.stop();
    let done = false;
    void stopped.then(() => (done = true)); // awaited below
    await vi.advanceTimersByTimeAsync(0);
    // stop() waits for the run in progress.
    expect(done).toBe(false);
    release();
    await stopped;
    await vi.advanceTimersByTimeAsync(5_000);
    expect(runs).toBe(3);
  });
});

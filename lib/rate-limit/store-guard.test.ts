import { describe, expect, it } from "vitest";
import { createStoreGuard } from "./store-guard";

const never = () => new Promise<never>(() => {});

describe("store guard", () => {
  it("times out a hung call, opens after N failures, then fails at once", async () => {
    const events: string[] = [];
    const guard = createStoreGuard({ timeoutMs: 30, breakerFailures: 2, halfOpenAfterMs: 60_000, onOpen: () => events.push("open") });
    const started = performance.now();
    await expect(guard.execute(never)).rejects.toThrow();
    expect(performance.now() - started).toBeLessThan(500);
    expect(guard.health()).toBe("up");
    await expect(guard.execute(never)).rejects.toThrow();
    expect(events).toEqual(["open"]);
    expect(guard.health()).toBe("down");
    let called = false;
    await expect(
      guard.execute(async () => {
        called = true;
        return 1;
      }),
    ).rejects.toThrow();
    expect(called).toBe(false);
  });

  it("lets a trial call through after the half-open delay and closes on success", async () => {
    const events: string[] = [];
    const guard = createStoreGuard({ timeoutMs: 20, breakerFailures: 1, halfOpenAfterMs: 50, onClose: () => events.push("close") });
    await expect(guard.execute(async () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect(guard.health()).toBe("down");
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(await guard.execute(async () => "back")).toBe("back");
    expect(guard.health()).toBe("up");
    expect(events).toEqual(["close"]);
  });
});

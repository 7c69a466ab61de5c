import { spawn } from "node:child_process";
import net from "node:net";
import { afterAll, describe, expect, it } from "vitest";
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

// Issue 59: with Redis healthy, a sign-in got 503 under CPU load: the loop was busy past the
// deadline, and the timer ran before the answer already waiting on the socket was read.
describe("a store guard on a busy event loop", () => {
  // The store in a process of its own, as Redis is: it answers while this loop is blocked.
  const store = spawn(
    process.execPath,
    [
      "-e",
      `const s = require("node:net").createServer((c) => c.on("data", (d) => c.write(d))); s.listen(0, "127.0.0.1", () => console.log(s.address().port));`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  afterAll(() => void store.kill("SIGKILL"));

  it("takes an answer that arrived before the deadline, however late the loop gets to it", async () => {
    const port = Number(await new Promise<string>((resolve) => store.stdout.once("data", (data) => resolve(String(data).trim()))));
    const socket = net.connect(port, "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    const guard = createStoreGuard({ timeoutMs: 50, breakerFailures: 5, halfOpenAfterMs: 60_000 });
    const answer = guard.execute(
      () =>
        new Promise<string>((resolve) => {
          socket.once("data", (data) => resolve(String(data)));
          socket.write("pong");
        }),
    );
    // The store answers at once; the loop is blocked past the deadline (CPU load), then turns.
    const busyUntil = performance.now() + 200;
    while (performance.now() < busyUntil);
    try {
      await expect(answer).resolves.toBe("pong");
    } finally {
      socket.destroy();
    }
  });
});

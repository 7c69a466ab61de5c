import { spawn, type ChildProcess } from "node:child_process";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gatehouse } from "@/lib/gatehouse";
import { freshPglite, type TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { freePort } from "../helpers/ports";
import { redisUrl, testKeyPrefix } from "../helpers/redis";

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const connected = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => socket.end(() => resolve(true)));
      socket.on("error", () => resolve(false));
    });
    if (connected) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`redis-server did not listen on ${port}`);
}

// Runs wherever the machine has Redis (CI sets TEST_REDIS_URL); the test starts its own
// redis-server on a free port so that freezing it cannot disturb anything else.
describe.skipIf(!redisUrl())("a hung Redis (SIGSTOP) under the real composition", () => {
  let redis: ChildProcess;
  let database: TestDatabase;
  let gate: Gatehouse;
  const TIMEOUT_MS = 150;

  beforeAll(async () => {
    const port = await freePort();
    redis = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
    await waitForPort(port, 5_000);
    database = await freshPglite();
    gate = await servedGatehouse(database.url, {
      RATE_LIMIT_STORE: "redis",
      REDIS_URL: `redis://127.0.0.1:${port}`,
      RATE_LIMIT_KEY_PREFIX: testKeyPrefix(),
      RATE_LIMIT_STORE_TIMEOUT_MS: String(TIMEOUT_MS),
      RATE_LIMIT_BREAKER_FAILURES: "3",
      RATE_LIMIT_BREAKER_HALF_OPEN_MS: "1000",
      RATE_LIMIT_SIGN_IN_USERNAME: "2/15m",
    });
  });

  afterAll(async () => {
    redis?.kill("SIGCONT");
    redis?.kill("SIGKILL");
    await closeServed(gate);
    await database?.dispose();
  });

  it("fails closed within the timeout, opens the circuit, fails open for capacity, and recovers after SIGCONT", async () => {
    const signIn = (user: string) => gate.limiter.consume("signInUsername", ["198.51.100.7", user]);

    // Healthy: the limit applies.
    expect((await signIn("alice")).allowed).toBe(true);
    expect((await signIn("alice")).allowed).toBe(true);
    expect((await signIn("alice")).allowed).toBe(false);
    expect(gate.storeHealth()).toEqual({ kind: "redis", state: "up" });

    redis.kill("SIGSTOP");
    // Each call gives up at the timeout and the sign-in policy refuses (fail closed). Each is
    // a new user: this instance's own count (2 per user) would refuse a third by itself.
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const outcome = await signIn(`bob${i}`);
      const elapsedMs = performance.now() - started;
      expect(outcome).toMatchObject({ allowed: false, storeFailed: true });
      expect(elapsedMs).toBeLessThan(TIMEOUT_MS + 200);
    }
    // The circuit is open: refused at once, without waiting for the timeout.
    expect(gate.storeHealth().state).toBe("down");
    const started = performance.now();
    expect(await signIn("carol")).toMatchObject({ allowed: false, storeFailed: true });
    expect(performance.now() - started).toBeLessThan(50);
    // A capacity-only policy has a circuit of its own, still closed: it waits for the timeout,
    // then lets traffic through (fail open), but only up to this instance's own count.
    for (let i = 0; i < 10; i++) {
      expect(await gate.limiter.consume("altchaChallengeDevice", ["198.51.100.7"])).toMatchObject({ allowed: true, storeFailed: true });
    }
    expect(await gate.limiter.consume("altchaChallengeDevice", ["198.51.100.7"])).toMatchObject({ allowed: false, storeFailed: false });

    redis.kill("SIGCONT");
    // After the half-open delay one trial call goes through, the circuit closes, the limit is back.
    let poll = 0;
    await expect.poll(async () => (await signIn(`erin${poll++}`)).storeFailed, { timeout: 5_000, interval: 250 }).toBe(false);
    // Each circuit closes on its own policy's next call after the delay: the challenge's too.
    await expect
      .poll(async () => (await gate.limiter.consume("altchaChallengeDevice", [`198.51.100.${poll++}`])).storeFailed, {
        timeout: 5_000,
        interval: 250,
      })
      .toBe(false);
    expect(gate.storeHealth().state).toBe("up");
    expect((await signIn("dave")).allowed).toBe(true);
    expect((await signIn("dave")).allowed).toBe(true);
    expect((await signIn("dave")).allowed).toBe(false);
    // State written before the outage is still there.
    expect((await signIn("alice")).allowed).toBe(false);
  });
});

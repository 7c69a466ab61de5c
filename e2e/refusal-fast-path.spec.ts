import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { request as playwrightRequest } from "@playwright/test";
import { comparable } from "./helpers/compare";
import { startInstance, sharedSecrets, type Instance } from "./helpers/instances";
import { expect, test } from "./helpers/serverGrid";

test.describe("the refusal fast path in server.mjs", () => {
  test.describe.configure({ mode: "serial" });
  let instance: Instance;
  let dataDir: string;

  test.beforeAll(async () => {
    test.setTimeout(90_000);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-fast-"));
    // Debug logging names each refusal and says which of them the fast path answered.
    instance = await startInstance({
      ...sharedSecrets(),
      DATABASE_URL: `pglite:${dataDir}`,
      RATE_LIMIT_ALTCHA_CHALLENGE: "2/1m",
      LOG_LEVEL: "debug",
    });
  });

  test.afterAll(async () => {
    await instance?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test("answers a refused address with the route's own 429, headers and body, and nobody else", async () => {
    const client = (address: string) =>
      playwrightRequest.newContext({ baseURL: instance.baseURL, extraHTTPHeaders: { "X-Forwarded-For": address } });
    const flooder = await client("198.51.100.77");
    for (let i = 0; i < 2; i++) expect((await flooder.get("/api/altcha/challenge")).status()).toBe(200);
    // Third: refused by the route (through Next.js), which remembers it. Fourth: the fast path.
    const [byRoute, byFastPath] = [await flooder.get("/api/altcha/challenge"), await flooder.get("/api/altcha/challenge")];
    const route = comparable(byRoute);
    const fast = comparable(byFastPath);
    expect(route.status).toBe(429);
    expect(fast.status).toBe(429);
    // Retry-After counts down between the two answers; everything else is the same, byte for byte.
    const routeBody = (await byRoute.json()) as { retryAfterSeconds: number };
    const fastBody = (await byFastPath.json()) as { retryAfterSeconds: number };
    expect(routeBody.retryAfterSeconds - fastBody.retryAfterSeconds).toBeGreaterThanOrEqual(0);
    expect(routeBody.retryAfterSeconds - fastBody.retryAfterSeconds).toBeLessThanOrEqual(1);
    const sameSecond = (headers: Record<string, string>, seconds: number) => ({ ...headers, "retry-after": String(seconds) });
    expect(sameSecond(fast.headers, 0)).toEqual(sameSecond(route.headers, 0));
    expect(await byFastPath.text()).toBe(
      (await byRoute.text()).replace(
        `"retryAfterSeconds":${routeBody.retryAfterSeconds}`,
        `"retryAfterSeconds":${fastBody.retryAfterSeconds}`,
      ),
    );
    expect(fast.headers["x-content-type-options"]).toBe("nosniff");
    const events = (name: string, outcome = "") =>
      instance
        .output()
        .split("\n")
        .filter((line) => line.includes(`"event":"${name}"`) && line.includes(outcome)).length;
    // The security log has the route's refusal; the fast path's repeat is only a debug line.
    expect(events("security", '"outcome":"rate_limited"')).toBe(1);
    expect(events("refused_early")).toBe(1);

    // Another address, and another route for the same address, are answered as usual.
    expect((await (await client("198.51.100.78")).get("/api/altcha/challenge")).status()).toBe(200);
    expect((await flooder.get("/api/health")).status()).toBe(200);
  });
});

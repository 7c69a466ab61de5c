import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { request as playwrightRequest } from "@playwright/test";
import { uniqueEmail } from "./helpers/accounts";
import { startInstance, sharedSecrets, type Instance } from "./helpers/instances";
import { altchaPayload, expect, test } from "./helpers/serverGrid";

// A server whose hash budget is one operation and no queue, so a small burst overflows it.
// In the production build the budget is built at start in another bundle than the route
// handlers; this is the test that caught its refusals turning into 500s.
test.describe("the hash budget in the production build", () => {
  let instance: Instance | undefined;
  let dataDir: string;

  test.beforeAll(async () => {
    test.setTimeout(90_000);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-budget-"));
    instance = await startInstance({ ...sharedSecrets(), DATABASE_URL: `pglite:${dataDir}`, HASH_CONCURRENCY: "1", HASH_QUEUE: "0" });
  });

  test.afterAll(async () => {
    await instance?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test("answers an overflow with 503 busy and Retry-After, never a 500", async () => {
    const clients = await Promise.all(
      Array.from({ length: 8 }, async (_, i) =>
        playwrightRequest.newContext({ baseURL: instance!.baseURL, extraHTTPHeaders: { "X-Forwarded-For": `10.250.0.${i + 1}` } }),
      ),
    );
    const bodies = await Promise.all(
      clients.map(async (client) => ({
        email: uniqueEmail("burst"),
        password: "a long enough passphrase",
        altcha: await altchaPayload(client),
      })),
    );
    const responses = await Promise.all(clients.map((client, i) => client.post("/api/register", { data: bodies[i] })));
    const statuses = responses.map((response) => response.status());
    expect(statuses).not.toContain(500);
    expect(statuses.filter((status) => status === 202).length).toBeGreaterThanOrEqual(1);
    const busy = responses.filter((response) => response.status() === 503);
    expect(busy.length).toBeGreaterThanOrEqual(1);
    expect(busy[0]!.headers()["retry-after"]).toBe("1");
    expect(await busy[0]!.json()).toMatchObject({ error: "busy" });
    await Promise.all(clients.map((client) => client.dispose()));
  });
});

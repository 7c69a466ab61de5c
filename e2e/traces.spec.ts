import fs from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { request as playwrightRequest } from "@playwright/test";
import { PASSWORD, uniqueEmail } from "./helpers/accounts";
import { startInstance, sharedSecrets, type Instance } from "./helpers/instances";
import { expect, registerApi, signInApi, test } from "./helpers/serverGrid";

// Traces from the production server: instrumentation.ts starts the SDK, the routes' bundles (built
// apart from it) see it through globalThis, and an OTLP/HTTP receiver here gets a sign-in's layers.
test.describe("traces from the production server", () => {
  let dataDir: string;
  let instance: Instance | undefined;
  const bodies: string[] = [];
  const collector = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      if (req.url === "/v1/traces") bodies.push(body);
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });

  test.beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-traces-"));
    await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
  });

  test.afterAll(async () => {
    await instance?.stop();
    collector.closeAllConnections();
    await new Promise((resolve) => collector.close(resolve));
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test("a sign-in is a trace with its layers' spans, and no personal data", async () => {
    test.setTimeout(180_000);
    instance = await startInstance({
      ...sharedSecrets(),
      DATABASE_URL: `pglite:${dataDir}/pglite`,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
      OTEL_SERVICE_NAME: "gatehouse-e2e",
      NEW_DEVICE_CONFIRMATION: "off",
    });
    const client = await playwrightRequest.newContext({
      baseURL: instance.baseURL,
      extraHTTPHeaders: { "X-Forwarded-For": "203.0.113.91" },
    });
    const email = uniqueEmail("traced");
    expect((await registerApi(client, email, PASSWORD)).status()).toBe(202);
    expect((await signInApi(client, email, PASSWORD)).kind).toBe("signed-in");
    const names = () => bodies.flatMap((body) => [...body.matchAll(/"name":"([^"]+)"/g)].map((match) => match[1]));
    await expect
      .poll(names, { timeout: 20_000 })
      .toEqual(
        expect.arrayContaining([
          "gatehouse /api/auth/callback/credentials",
          "limit",
          "altcha",
          "lockout",
          "hash budget wait",
          "argon2id",
          "session write",
        ]),
      );
    // Only Gatehouse's spans leave: Next.js's own (with their URLs) do not.
    expect(names().filter((name) => name?.startsWith("GET ") || name === "start response")).toEqual([]);
    const everything = bodies.join("\n");
    expect(everything).toContain("gatehouse-e2e");
    expect(everything).not.toContain(email);
    expect(everything).not.toContain("203.0.113.91");
    await client.dispose();
  });
});

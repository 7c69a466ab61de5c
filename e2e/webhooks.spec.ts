import fs from "node:fs";
import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { request as playwrightRequest } from "@playwright/test";
import { Webhook } from "standardwebhooks";
import { PASSWORD, uniqueEmail } from "./helpers/accounts";
import { startInstance, sharedSecrets, type Instance } from "./helpers/instances";
import { expect, registerApi, signInApi, test } from "./helpers/serverGrid";

// Security webhooks from the production server: a lock is queued in the statement that records it,
// so a kill -9 after the event (the receiver refusing meanwhile) loses nothing, and the next start
// delivers it, signed, under the webhook-id of the first attempt.
test.describe("security webhooks across a kill -9", () => {
  test.describe.configure({ mode: "serial" });
  let dataDir: string;
  let instance: Instance | undefined;
  const received: { headers: IncomingHttpHeaders; body: string }[] = [];
  let status = 503;
  const receiver = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      received.push({ headers: req.headers, body });
      res.writeHead(status).end();
    });
  });

  test.beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-webhooks-"));
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  });

  test.afterAll(async () => {
    await instance?.stop();
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test("a lock refused by the receiver, the instance killed, delivered by the next start", async () => {
    test.setTimeout(240_000);
    const secret = `whsec_${randomBytes(32).toString("base64")}`;
    const env = {
      ...sharedSecrets(),
      DATABASE_URL: `pglite:${dataDir}/pglite`,
      LOCKOUT_THRESHOLD: "3",
      SECURITY_WEBHOOK_URL: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`,
      SECURITY_WEBHOOK_SECRET: secret,
    };
    instance = await startInstance(env);
    let next = 1;
    const client = () =>
      playwrightRequest.newContext({ baseURL: instance!.baseURL, extraHTTPHeaders: { "X-Forwarded-For": `203.0.113.${next++}` } });
    const email = uniqueEmail("webhook-kill");
    expect((await registerApi(await client(), email, PASSWORD)).status()).toBe(202);
    for (let i = 0; i < 3; i++) expect((await signInApi(await client(), email, "not the password")).kind).toBe("invalid");

    // The dispatcher's first attempt (within its 5 s poll) is answered 503: the event stays queued.
    await expect.poll(() => received.length, { timeout: 30_000 }).toBeGreaterThan(0);
    const firstId = received[0]!.headers["webhook-id"];
    instance.signal("SIGKILL");
    await instance.exited;
    instance = undefined;

    status = 204;
    received.length = 0;
    instance = await startInstance(env);
    await expect.poll(() => received.length, { timeout: 30_000 }).toBeGreaterThan(0);
    const [delivery] = received;
    expect(delivery!.headers["webhook-id"]).toBe(firstId);
    const event = new Webhook(secret).verify(delivery!.body, delivery!.headers as Record<string, string>);
    expect(event).toMatchObject({ type: "account.locked", data: { change: "locked", network: "203.0.113.x" } });
    expect(delivery!.body).not.toContain(email);
  });
});

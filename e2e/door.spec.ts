import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { request as playwrightRequest } from "@playwright/test";
import { confirmFromOutbox, PASSWORD, signInThroughUi, submitRegistration, uniqueEmail } from "./helpers/accounts";
import { startInstance, sharedSecrets, type Instance } from "./helpers/instances";
import { expect, test } from "./helpers/serverGrid";

const METRICS_TOKEN = "door-metrics-token-0123456789abcdef0123456789";

// The door in server.mjs (lib/http/door.ts), through the production server: with
// DOOR_BUSY_SHARE=0 every moment counts as busy, so requests without a live known device wait their
// longest and are answered 503 (but for one each 100 ms), while the owner's browser goes past and signs in.
test.describe("the door in front of Next.js", () => {
  test.describe.configure({ mode: "serial" });
  let dataDir: string;
  let secrets: Record<string, string>;
  let instance: Instance | undefined;

  test.beforeAll(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-door-"));
    secrets = sharedSecrets();
  });

  test.afterAll(async () => {
    await instance?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test("while strangers are held, the owner's known device signs in, health answers, and the rest get 503 busy", async ({ browser }) => {
    test.setTimeout(180_000);
    const email = uniqueEmail("door");
    // First the owner's browser becomes a known device, on an instance whose door is off.
    const open = await startInstance({ ...secrets, DATABASE_URL: `pglite:${dataDir}`, DOOR_BUSY_SHARE: "1" });
    const owner = await browser.newContext({ baseURL: open.baseURL, extraHTTPHeaders: { "X-Forwarded-For": "198.51.100.20" } });
    const page = await owner.newPage();
    try {
      await submitRegistration(page, email);
      await confirmFromOutbox(page, email);
    } finally {
      await open.stop();
    }
    // `__Host-` prefixed under an https public URL, plain here over http (lib/http/cookies.ts).
    const deviceCookie = async () => (await owner.cookies()).find((cookie) => cookie.name.endsWith("gatehouse-device"));
    expect(await deviceCookie()).toBeDefined();

    // The same database, the door always shut to strangers (cookies are the host's, whatever the port).
    instance = await startInstance({
      ...secrets,
      DATABASE_URL: `pglite:${dataDir}`,
      DOOR_BUSY_SHARE: "0",
      DOOR_MAX_WAIT_MS: "300",
      METRICS_TOKEN,
    });
    const baseURL = instance.baseURL;
    const stranger = await playwrightRequest.newContext({ baseURL, extraHTTPHeaders: { "X-Forwarded-For": "198.51.100.21" } });
    // However busy the loop, one stranger gets in each 100 ms (the floor), and no more: the rest wait
    // 300 ms and are refused. The bound counts from the client's own clock, which spans the server's,
    // so a loaded machine that spreads the arrivals out cannot make it fail.
    const startedMs = Date.now();
    const strangers = await Promise.all(Array.from({ length: 20 }, () => stranger.get("/sign-in")));
    const spanMs = Date.now() - startedMs;
    const refused = strangers.filter((response) => response.status() === 503);
    expect(strangers.every((response) => [200, 503].includes(response.status()))).toBe(true);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(strangers.length - refused.length).toBeLessThanOrEqual(Math.floor(spanMs / 100) + 1);
    expect(refused[0]!.headers()["retry-after"]).toBe("1");
    expect(await refused[0]!.json()).toMatchObject({ error: "busy", retryAfterSeconds: 1 });

    // A device cookie the server did not sign is no known device.
    const device = (await deviceCookie())!;
    const [id, expires, mac] = device.value.split(".");
    const forged = `${id}.${expires}.${mac}.${"A".repeat(22)}`;
    const forger = await playwrightRequest.newContext({
      baseURL,
      extraHTTPHeaders: { "X-Forwarded-For": "198.51.100.22", cookie: `${device.name}=${forged}` },
    });
    const forged12 = await Promise.all(Array.from({ length: 12 }, () => forger.get("/sign-in")));
    expect(forged12.filter((response) => response.status() === 503).length).toBeGreaterThanOrEqual(8);

    // Health never waits.
    expect((await stranger.get("/api/health")).status()).toBe(200);

    // The owner: signed out, then in again through the page (its challenge, its POST, the account page).
    const ownerPage = await owner.newPage();
    await ownerPage.goto(`${baseURL}/account`);
    await expect(ownerPage.getByTestId("account-email")).toHaveText(email);
    await ownerPage.getByRole("button", { name: "Sign out", exact: true }).click();
    await expect(ownerPage.getByTestId("who")).toContainText("You are not signed in");
    await ownerPage.goto(`${baseURL}/sign-in`);
    await signInThroughUi(ownerPage, email, PASSWORD);
    await expect(ownerPage.getByTestId("who")).toContainText(`Signed in as ${email}`);

    const metrics = await (await stranger.get("/api/metrics", { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
    expect(Number(/^gatehouse_door_waits_total\{outcome="busy"\} (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(2);
    expect(Number(/^gatehouse_door_known_devices_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0);
    await owner.close();
    await stranger.dispose();
    await forger.dispose();
  });
});

import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { request as playwrightRequest } from "@playwright/test";
import { comparable } from "./helpers/compare";
import { startInstance, sharedSecrets, type Instance } from "./helpers/instances";
import { expect, registerApi, signInApi, test } from "./helpers/serverGrid";
import { PASSWORD, uniqueEmail } from "./helpers/accounts";

// docs/decisions/0042: server.mjs calls the sign-in route's handler itself once Next.js has loaded it.
test.describe("the sign-in answered in front of Next.js", () => {
  test.describe.configure({ mode: "serial" });
  let instance: Instance;
  let dataDir: string;

  test.beforeAll(async () => {
    test.setTimeout(90_000);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-in-front-"));
    // Debug logging says which sign-ins were answered in front.
    instance = await startInstance({ ...sharedSecrets(), DATABASE_URL: `pglite:${dataDir}`, LOG_LEVEL: "debug" });
  });

  test.afterAll(async () => {
    await instance?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const inFront = () =>
    instance
      .output()
      .split("\n")
      .filter((line) => line.includes('"event":"answered_in_front"')).length;

  test("answers as Next.js does: the same status, headers and body, gzip included", async () => {
    const client = await playwrightRequest.newContext({
      baseURL: instance.baseURL,
      extraHTTPHeaders: { "X-Forwarded-For": "198.51.100.41", "Sec-Fetch-Site": "same-origin" },
    });
    // No proof of work: ALTCHA's refusal, the same for every such request.
    const post = () =>
      client.post("/api/auth/callback/credentials", {
        form: { email: "nobody@example.com", password: "wrong password", altcha: "", callbackUrl: "/", json: "true" },
      });
    // The first loads the route, through Next.js; the second is answered in front.
    const byNext = await post();
    expect(inFront()).toBe(0);
    const byServer = await post();
    await expect.poll(inFront).toBe(1);
    expect(byNext.status()).toBe(400);
    expect(comparable(byServer)).toEqual(comparable(byNext));
    expect(comparable(byServer).headers["content-encoding"]).toBe("gzip");
    expect(await byServer.text()).toBe(await byNext.text());
    // Without gzip: the same body, not encoded.
    const plain = await client.post("/api/auth/callback/credentials", {
      headers: { "Accept-Encoding": "identity" },
      form: { email: "nobody@example.com", password: "wrong password", altcha: "", callbackUrl: "/", json: "true" },
    });
    expect(plain.headers()["content-encoding"]).toBeUndefined();
    expect(await plain.text()).toBe(await byNext.text());
    await client.dispose();
  });

  test("signs in with both cookies, each its own Set-Cookie, and the session works", async () => {
    const client = await playwrightRequest.newContext({
      baseURL: instance.baseURL,
      extraHTTPHeaders: { "X-Forwarded-For": "198.51.100.42", "Sec-Fetch-Site": "same-origin" },
    });
    const email = uniqueEmail("front");
    expect((await registerApi(client, email, PASSWORD)).status()).toBe(202);
    const before = inFront();
    const outcome = await signInApi(client, email, PASSWORD);
    expect(outcome.kind).toBe("signed-in");
    await expect.poll(inFront).toBe(before + 1);
    const state = await client.storageState();
    const names = state.cookies.map((cookie) => cookie.name);
    expect(names).toEqual(expect.arrayContaining(["next-auth.session-token", "gatehouse-device"]));
    const session = (await (await client.get("/api/auth/session")).json()) as { user?: { email?: string } };
    expect(session.user?.email).toBe(email);
    await client.dispose();
  });

  test("answers another method, a trailing slash and an encoded path through Next.js: the same wrapper, or none", async () => {
    const client = await playwrightRequest.newContext({
      baseURL: instance.baseURL,
      extraHTTPHeaders: { "X-Forwarded-For": "198.51.100.43", "Sec-Fetch-Site": "same-origin" },
    });
    const before = inFront();
    const form = { email: "nobody@example.com", password: "wrong password", altcha: "", callbackUrl: "/", json: "true" };
    const slash = await client.post("/api/auth/callback/credentials/", { form, maxRedirects: 0 });
    const encoded = await client.post("/api/auth/callback/credential%73", { form });
    const put = await client.put("/api/auth/callback/credentials", { form });
    expect(inFront()).toBe(before);
    // Next.js redirects the slash away, serves the decoded path with the same handler, and has no PUT.
    expect(slash.status()).toBe(308);
    expect([400, 404]).toContain(encoded.status());
    expect(put.status()).toBe(405);
    await client.dispose();
  });

  // Playwright's client normalises a URL before sending it; these go as written, over a socket.
  test("answers a dot-segment spelling in front too, and a target that is no path with a 400", async () => {
    const before = inFront();
    const form = "email=nobody%40example.com&password=wrong&altcha=&json=true";
    const raw = (target: string) =>
      rawRequest(
        instance.baseURL,
        `POST ${target} HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 198.51.100.44\r\nSec-Fetch-Site: same-origin\r\n` +
          `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\nConnection: close\r\n\r\n${form}`,
      );
    for (const target of ["/api/auth/callback/./credentials", "/api/auth/x/../callback/credentials", "/api/auth/callback/%2e/credentials"])
      expect(await raw(target), target).toMatch(/^HTTP\/1\.1 400 /);
    await expect.poll(inFront).toBe(before + 3);
    const star = await raw("*");
    expect(star).toMatch(/^HTTP\/1\.1 400 /);
    expect(star).toContain('"error":"invalid_request"');
    expect(instance.output()).not.toContain("Invalid URL");
  });
});

/** Sends `text` as it is and reads the whole answer (the request asks the server to close). */
function rawRequest(baseURL: string, text: string): Promise<string> {
  const { hostname, port } = new URL(baseURL);
  return new Promise((resolve, reject) => {
    // Written, not ended: the server closes once it has answered (Connection: close).
    const socket = net.connect(Number(port), hostname, () => socket.write(text));
    let answer = "";
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => (answer += chunk));
    socket.on("close", () => resolve(answer));
    socket.on("error", reject);
  });
}

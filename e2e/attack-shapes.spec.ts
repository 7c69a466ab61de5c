import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { request as playwrightRequest, type APIRequestContext, type APIResponse } from "@playwright/test";
import { PASSWORD, registerThroughUi, signInThroughUi, uniqueEmail } from "./helpers/accounts";
import { startInstance, sharedSecrets, type Instance } from "./helpers/instances";
import { altchaPayload, expect, registerApi, test } from "./helpers/serverGrid";

/**
 * The attack-shape suite over HTTP, against the production build: every request shape that might
 * reach the password check without passing the pipeline, sent at a locked account with its right
 * password. None may end with a session, a 5xx, or an Argon2id verification. Verifications are
 * counted from the server's log (one sign_in_failed or sign_in_succeeded event per verification).
 */
test.describe("request shapes against a locked account", () => {
  test.describe.configure({ mode: "serial" });
  let instance: Instance;
  let dataDir: string;
  let sequence = 0;
  const victim = uniqueEmail("victim");

  /** A client with an address of its own, as a distinct attacker behind the trusted proxy. */
  async function client(): Promise<APIRequestContext> {
    sequence += 1;
    return playwrightRequest.newContext({
      baseURL: instance.baseURL,
      // A post from the app's own page, as a browser says it (the CSRF rule has its own shapes).
      extraHTTPHeaders: {
        "Sec-Fetch-Site": "same-origin",
        "X-Forwarded-For": `172.20.${Math.floor(sequence / 250)}.${(sequence % 250) + 1}`,
      },
    });
  }

  function verifications(): number {
    return instance
      .output()
      .split("\n")
      .filter((line) => /"event":"sign_in_(failed|succeeded)"/.test(line)).length;
  }

  function hasSession(response: APIResponse): boolean {
    return response.headersArray().some((header) => header.name.toLowerCase() === "set-cookie" && /session-token=[^;]/.test(header.value));
  }

  async function expectRefused(response: APIResponse, label: string) {
    expect(response.status(), label).toBeGreaterThanOrEqual(400);
    expect(response.status(), label).toBeLessThan(500);
    expect(hasSession(response), label).toBe(false);
    // A 4xx JSON error, or a 404 from the router (a path outside /api is Next.js's page).
    if (response.status() !== 404) expect(response.headers()["content-type"] ?? "", label).toContain("application/json");
  }

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-attack-"));
    instance = await startInstance({
      ...sharedSecrets(),
      DATABASE_URL: `pglite:${dataDir}`,
      LOG_LEVEL: "info",
      LOCKOUT_THRESHOLD: "5",
      LOCKOUT_BASE_SECONDS: "3600",
      HASH_QUEUE: "100",
    });
    const setup = await client();
    expect((await registerApi(setup, victim, PASSWORD)).status()).toBe(202);
    // Confirming the address was the account's first password check (its log line may trail the answer).
    await expect.poll(verifications).toBe(1);
    const confirmed = 1;
    for (let i = 0; i < 5; i++) {
      const attacker = await client();
      const res = await attacker.post("/api/v1/authentication/token", {
        data: { email: victim, password: "wrong guess", altcha: await altchaPayload(attacker) },
      });
      expect(res.status()).toBe(401);
    }
    const locked = await (
      await client()
    ).post("/api/v1/authentication/token", { data: { email: victim, password: PASSWORD, altcha: await altchaPayload(setup) } });
    expect(locked.status()).toBe(429);
    // The server writes each line after its answer, so the last may not have arrived yet.
    await expect.poll(() => verifications() - confirmed).toBe(5);
  });

  test.afterAll(async () => {
    await instance?.stop();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const OTHER_PATHS = [
    "/api/auth/callback/credentials/x",
    "/api/auth/callback/credentials/x/y",
    "/api/auth/callback/credentials/",
    "/api/auth//callback/credentials",
    "/api/auth/callback//credentials",
    "//api/auth/callback/credentials",
    "/API/AUTH/callback/credentials",
    "/api/auth/CALLBACK/credentials",
    "/api/auth/callback/Credentials",
    "/api/auth/callback%2Fcredentials",
    "/api/auth/callback/credentials%2Fx",
    "/api/auth/callback/credentials;x",
    "/api/auth/callback/credentials.json",
    "/api/auth/signin/credentials",
    "/api/auth/callback/github",
    "/api/auth/_log",
  ];

  test("every other path, with the form next-auth would take, gets a 4xx and no session", async () => {
    const before = verifications();
    for (const route of OTHER_PATHS) {
      const api = await client();
      const form = { email: victim, password: PASSWORD, altcha: await altchaPayload(api), callbackUrl: "/", json: "true" };
      // Absolute, so "//api/…" stays a path and is not read as another host.
      const url = `${instance.baseURL}${route}`;
      await expectRefused(await api.post(url, { form, maxRedirects: 5 }), route);
      await expectRefused(
        await api.post(`${url}?json=true`, {
          headers: { "content-type": "application/json" },
          data: JSON.stringify(form),
          maxRedirects: 5,
        }),
        `${route} as JSON`,
      );
      await api.dispose();
    }
    expect(verifications() - before).toBe(0);
  });

  test("next-auth's client logger is gone: no unauthenticated error-level log line per request", async () => {
    const api = await client();
    const marker = `forged-${Date.now()}`;
    for (let i = 0; i < 20; i++) {
      const res = await api.post("/api/auth/_log", { form: { level: "error", code: marker, message: "x".repeat(8_000) } });
      expect(res.status()).toBe(404);
    }
    expect(instance.output()).not.toContain(marker);
  });

  test("method overrides and other methods do not reach the password check", async () => {
    const before = verifications();
    const api = await client();
    const form = { email: victim, password: PASSWORD, altcha: await altchaPayload(api), json: "true" };
    const overrides = {
      "X-HTTP-Method-Override": "POST",
      "X-HTTP-Method": "POST",
      "X-Method-Override": "POST",
      "x-middleware-subrequest": "proxy:proxy:proxy:proxy:proxy",
    };
    const query = `?${new URLSearchParams(form)}`;
    for (const method of ["GET", "PUT", "PATCH", "DELETE"]) {
      const res = await api.fetch(`/api/auth/callback/credentials${query}`, {
        method,
        headers: overrides,
        form: method === "GET" ? undefined : form,
      });
      expect(res.status(), method).toBe(405);
      expect(hasSession(res)).toBe(false);
    }
    await expectRefused(await api.post("/api/auth/callback/credentials", { headers: overrides, form }), "POST with overrides");
    expect(verifications() - before).toBe(0);
  });

  test("content types read two ways, in both orders, multipart, duplicates and query fields: 4xx, no session", async () => {
    const before = verifications();
    const decoy = uniqueEmail("decoy");
    const shapes: { label: string; contentType: string; body: (altcha: string) => string | Buffer }[] = [];
    const form = (altcha: string, email = victim) => new URLSearchParams({ email, password: PASSWORD, altcha, json: "true" }).toString();
    const json = (altcha: string, email = victim) => JSON.stringify({ email, password: PASSWORD, altcha, json: "true" });
    for (const contentType of [
      "application/json; x=application/x-www-form-urlencoded",
      "application/x-www-form-urlencoded; x=application/json",
      "application/json, application/x-www-form-urlencoded",
      "application/x-www-form-urlencoded, application/json",
      "text/plain",
      "application/x-www-form-urlencoded; charset=utf-16",
    ]) {
      shapes.push({ label: `${contentType} with a form naming a decoy`, contentType, body: (a) => form(a, decoy) });
      shapes.push({ label: `${contentType} with JSON naming the victim`, contentType, body: (a) => json(a) });
    }
    shapes.push({
      label: "the victim named twice",
      contentType: "application/x-www-form-urlencoded",
      body: (a) => `${form(a, decoy)}&email=${encodeURIComponent(victim)}`,
    });
    shapes.push({
      label: "multipart",
      contentType: "multipart/form-data; boundary=XyZ",
      body: (a) =>
        Object.entries({ email: victim, password: PASSWORD, altcha: a, json: "true" })
          .map(([name, value]) => `--XyZ\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
          .join("") + "--XyZ--\r\n",
    });
    for (const shape of shapes) {
      const api = await client();
      const body = shape.body(await altchaPayload(api));
      await expectRefused(
        await api.post("/api/auth/callback/credentials", { headers: { "content-type": shape.contentType }, data: body }),
        shape.label,
      );
      await api.dispose();
    }
    expect(verifications() - before).toBe(0);

    // Fields in the query string are not read: the body's decoy is the one checked (one verification).
    const api = await client();
    const victimQuery = new URLSearchParams({ email: victim, password: PASSWORD, callbackUrl: "https://evil.example/" });
    const res = await api.post(`/api/auth/callback/credentials?${victimQuery}`, {
      form: { email: decoy, password: "a decoy password", altcha: await altchaPayload(api), json: "true" },
    });
    expect(res.status()).toBe(401);
    expect(hasSession(res)).toBe(false);
    expect(verifications() - before).toBe(1);
  });

  test("the right password on the token endpoint and the browser sign-in: 429 locked, nothing verified", async () => {
    const before = verifications();
    const api = await client();
    const browser = await api.post("/api/auth/callback/credentials", {
      form: { email: victim, password: PASSWORD, altcha: await altchaPayload(api), json: "true" },
    });
    expect(browser.status()).toBe(429);
    expect(hasSession(browser)).toBe(false);
    const token = await api.post("/api/v1/authentication/token", {
      data: { email: ` ${victim.toUpperCase()} `, password: PASSWORD, altcha: await altchaPayload(api) },
    });
    expect(token.status()).toBe(429);
    expect(verifications() - before).toBe(0);
  });

  test("the CSRF rule at the real server: no token round trip, another site's post refused before the body", async () => {
    const before = verifications();
    const api = await client();
    // The hand copy of next-auth's CSRF token is gone, and its route with it.
    expect((await api.get("/api/auth/csrf")).status()).toBe(404);
    for (const headers of [{ "Sec-Fetch-Site": "cross-site" }, { "Sec-Fetch-Site": "same-site" }, { "Sec-Fetch-Site": "" }]) {
      const res = await api.post("/api/auth/callback/credentials", {
        headers: { ...headers, Origin: "https://evil.example" },
        form: { email: victim, password: PASSWORD, altcha: await altchaPayload(api), json: "true" },
      });
      expect(res.status(), JSON.stringify(headers)).toBe(403);
      expect(await res.json()).toMatchObject({ error: "csrf_invalid" });
      expect(hasSession(res)).toBe(false);
    }
    expect(verifications() - before).toBe(0);
  });

  test("12 parallel wrong passwords from 12 addresses reach Argon2id 5 times", async () => {
    const target = uniqueEmail("parallel");
    expect((await registerApi(await client(), target, PASSWORD)).status()).toBe(202);
    const attackers = await Promise.all(Array.from({ length: 12 }, () => client()));
    const prepared = await Promise.all(attackers.map(async (api) => ({ api, altcha: await altchaPayload(api) })));
    const before = verifications();
    const results = await Promise.all(
      prepared.map(({ api, altcha }) =>
        api.post("/api/auth/callback/credentials", { form: { email: target, password: "wrong guess", altcha, json: "true" } }),
      ),
    );
    expect(results.map((res) => res.status()).sort()).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
    // The server writes each line after its answer, so the last may not have arrived yet.
    await expect.poll(() => verifications() - before).toBe(5);
  });
});

test("a callback URL with a tab cannot send a signed-in browser off the site", async ({ page, baseURL }) => {
  const email = uniqueEmail("redirect");
  await registerThroughUi(page, email);
  for (const callbackUrl of ["/\t/evil.example", "/\\evil.example", "//evil.example", "https://evil.example/"]) {
    await page.goto(`/sign-in?callbackUrl=${encodeURIComponent(callbackUrl)}`);
    await signInThroughUi(page, email, PASSWORD);
    await page.waitForURL((url) => url.pathname === "/");
    expect(new URL(page.url()).origin).toBe(new URL(baseURL!).origin);
    await page.context().clearCookies();
  }
});

test.describe("a connection flood", () => {
  // One server, whose places both tests fill: one at a time.
  test.describe.configure({ mode: "serial" });
  let instance: Instance;
  let dataDir: string;

  test.beforeAll(async () => {
    test.setTimeout(90_000);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-e2e-connections-"));
    instance = await startInstance({
      ...sharedSecrets(),
      DATABASE_URL: `pglite:${dataDir}`,
      MAX_CONNECTIONS: "12",
      MAX_CONNECTIONS_PER_ADDRESS: "4",
    });
  });

  test.afterAll(async () => {
    await instance?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** A raw socket from `from` (any 127/8 address is this machine) that connects, then says nothing. */
  async function idleSocket(from: string): Promise<import("node:net").Socket> {
    const net = await import("node:net");
    const { port } = new URL(instance.baseURL);
    return new Promise((resolve, reject) => {
      const socket = net.connect({ port: Number(port), host: "127.0.0.1", localAddress: from }, () => resolve(socket));
      socket.once("error", reject);
    });
  }

  /** One request from `from` on a connection of its own: its status, or the error that ended it. */
  async function visit(from: string): Promise<number | string> {
    const socket = (await idleSocket(from)).on("error", () => {});
    return new Promise((resolve) => {
      let text = "";
      socket.on("data", (chunk) => (text += chunk.toString("latin1")));
      socket.on("close", () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? NaN) || "closed"));
      socket.write("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    });
  }

  const settle = () => new Promise((resolve) => setTimeout(resolve, 500));

  test("one address holding idle connections keeps only its share; a new visitor still gets in", async () => {
    const held = [];
    for (let i = 0; i < 20; i++) held.push((await idleSocket("127.0.0.2")).on("error", () => {}));
    // Well within the first-byte deadline (5 s): only the guard closes a socket this early.
    await settle();
    expect(held.filter((socket) => !socket.destroyed).length).toBeLessThanOrEqual(4);
    // Its newest were refused: a client that reopens what it loses would otherwise loop through requests.
    expect(held.slice(0, 4).every((socket) => !socket.destroyed)).toBe(true);
    expect(await visit("127.0.0.3")).toBe(200);
    for (const socket of held) socket.destroy();
  });

  test("at the cap, idle connections of the biggest holders give way to a new visitor", async () => {
    const held = [];
    // 4 addresses × their share of 4 fill every place (12) and more.
    for (let a = 10; a < 14; a++) for (let i = 0; i < 4; i++) held.push((await idleSocket(`127.0.0.${a}`)).on("error", () => {}));
    await settle();
    expect(held.filter((socket) => !socket.destroyed).length).toBeLessThanOrEqual(12);
    for (let v = 50; v < 53; v++) expect(await visit(`127.0.0.${v}`)).toBe(200);
    for (const socket of held) socket.destroy();
  });
});

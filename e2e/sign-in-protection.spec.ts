import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { sharedSecrets, startInstance } from "./helpers/instances";
import { altchaPayload, expect, registerApi, signInApi, test, withRetry } from "./helpers/serverGrid";
import { PASSWORD, uniqueEmail } from "./helpers/accounts";

const LOCKOUT_THRESHOLD = Number(process.env.E2E_LOCKOUT_THRESHOLD);

// Through the real route handlers of the production server, its database and its limiter.
test.describe("sign-in protection over HTTP", () => {
  test("5 wrong passwords from one address: the 6th is 429, and so is a 7th with the right password", async ({ request, newClient }) => {
    const email = uniqueEmail("limited");
    expect((await registerApi(request, email, PASSWORD)).status()).toBe(202);

    for (let i = 0; i < 5; i++) {
      const outcome = await signInApi(request, email, "wrong password");
      expect(outcome.kind, `attempt ${i + 1}`).toBe("invalid");
    }
    const sixth = await signInApi(request, email, "wrong password");
    expect(sixth.status).toBe(429);
    expect(sixth.body).toMatchObject({ error: "rate_limited" });
    expect(Number(sixth.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(sixth.retryAfter)).toBeLessThanOrEqual(6);

    const seventh = await signInApi(request, email, PASSWORD);
    expect(seventh.status).toBe(429);

    // Another address has its own allowance for the same username: its right password is checked
    // (not 429), and, the username being under attack, waits for the code mailed to the owner.
    const elsewhere = await signInApi(await newClient(), email, PASSWORD);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.body).toMatchObject({ error: "device_confirmation_required" });
  });

  test("40 usernames from one address are refused once the per-address limit (30) is spent", async ({ request, newClient }) => {
    test.setTimeout(120_000);
    const outcomes: number[] = [];
    for (let i = 0; i < 40; i++) {
      // Challenges come from other clients: the challenge endpoint has its own per-address limit.
      const altcha = await altchaPayload(await newClient());
      outcomes.push((await signInApi(request, uniqueEmail(`spray${i}`), "Summer2026!", altcha)).status);
    }
    const refused = outcomes.filter((status) => status === 429).length;
    // 30 per 15 minutes refills one every 30 s, so a slow run may earn one or two back.
    expect(refused).toBeGreaterThanOrEqual(8);
    expect(refused).toBeLessThanOrEqual(10);
    expect(outcomes.slice(0, 30).every((status) => status !== 429)).toBe(true);
  });

  test("an ALTCHA solution is accepted once: a replay gets 400 captcha_invalid", async ({ request, newClient }) => {
    const email = uniqueEmail("replay");
    expect((await registerApi(request, email, PASSWORD)).status()).toBe(202);
    const other = await newClient();
    const payload = await altchaPayload(other);
    expect((await signInApi(request, email, PASSWORD, payload)).kind).toBe("signed-in");
    const replay = await signInApi(other, email, PASSWORD, payload);
    expect(replay.status).toBe(400);
    expect(replay.body).toMatchObject({ error: "captcha_invalid", reason: "replayed" });
    expect((await signInApi(other, email, PASSWORD, "")).body).toMatchObject({ error: "captcha_invalid", reason: "missing" });
  });

  test("a locked username is refused before the password is checked, even from a new address", async ({ request, newClient }) => {
    const email = uniqueEmail("locked");
    expect((await registerApi(request, email, PASSWORD)).status()).toBe(202);
    // One failure per address: no limiter bucket fills, the username lockout does.
    for (let i = 0; i < LOCKOUT_THRESHOLD; i++) expect((await signInApi(await newClient(), email, "wrong password")).kind).toBe("invalid");
    const locked = await signInApi(await newClient(), email, PASSWORD);
    expect(locked.status).toBe(429);
    expect(locked.body).toMatchObject({ error: "locked" });
    expect(Number(locked.retryAfter)).toBeGreaterThan(20);
  });

  test("bad input gets a JSON 4xx, never a 500", async ({ request }) => {
    // Each from the app's own page, as a browser says it: the CSRF rule runs before the body.
    const own = { "Sec-Fetch-Site": "same-origin" };
    const malformed = await withRetry(() =>
      request.post("/api/auth/callback/credentials", { headers: { ...own, "content-type": "application/json" }, data: "{not json" }),
    );
    // One parser per route: the sign-in reads forms only.
    expect(malformed.status()).toBe(415);
    expect(await malformed.json()).toMatchObject({ error: "unsupported_media_type" });
    const huge = await request.post("/api/auth/callback/credentials", {
      headers: own,
      form: { email: "a@b.c", password: "x".repeat(1024 * 1024) },
    });
    expect(huge.status()).toBe(413);
    expect(await huge.json()).toMatchObject({ error: "payload_too_large" });
    const missing = await request.post("/api/auth/callback/credentials", { headers: own, form: { callbackUrl: "/" } });
    expect(missing.status()).toBe(400);
    expect(await missing.json()).toMatchObject({ error: "invalid_input" });
  });
});

test("a client cannot pick its own address by sending the server's peer header", async ({ playwright }) => {
  // An instance of its own: without X-Forwarded-For every client of the shared server is
  // 127.0.0.1, and any other test's stray request would spend the allowance counted here.
  test.setTimeout(90_000);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-peer-"));
  const instance = await startInstance({ ...sharedSecrets(), DATABASE_URL: `pglite:${dataDir}` });
  try {
    // No X-Forwarded-For: the peer (127.0.0.1) is the client, whatever x-gatehouse-peer claims.
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) {
      const client = await playwright.request.newContext({
        baseURL: instance.baseURL,
        extraHTTPHeaders: { "x-gatehouse-peer": `203.0.113.${i + 1}` },
      });
      statuses.push((await client.post("/api/register", { data: {} })).status());
      await client.dispose();
    }
    // Twenty invalid bodies spend 127.0.0.1's registration allowance (20 per hour); the 21st is refused.
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(400));
    expect(statuses[20]).toBe(429);
  } finally {
    await instance.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test("a flood of CSP reports from a client does not refuse its sign-in", async ({ request }) => {
  const email = uniqueEmail("telemetry");
  expect((await registerApi(request, email, PASSWORD)).status()).toBe(202);
  const report = { "csp-report": { "violated-directive": "script-src-elem", "blocked-uri": "inline" } };
  for (let i = 0; i < 100; i++) {
    const response = await request.post("/api/csp-report", {
      headers: { "content-type": "application/csp-report" },
      data: JSON.stringify(report),
    });
    expect(response.status()).toBe(204);
  }
  expect((await signInApi(request, email, PASSWORD)).kind).toBe("signed-in");
});

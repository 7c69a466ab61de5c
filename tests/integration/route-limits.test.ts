import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTE_RULES, type RouteLimit } from "@/lib/http/route-policies";
import { freshPglite, type TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";
import { apiTokenFor } from "../helpers/tokens";

type Handler = (request: Request, context?: unknown) => Promise<Response>;
type Sample = { handler: () => Promise<Handler>; request: (address: string) => Request | Promise<Request>; context?: unknown };

const EMAIL = "limits@example.com";
// The confirmation route learns its username from a live link, which only an unconfirmed account has.
const UNCONFIRMED = "limits-unconfirmed@example.com";
const NEW_EMAIL = "limits-moving@example.com";

/**
 * The route table is what runs: for every row of every limited route, a request that passes
 * everything before that row is refused once the row's bucket is spent. A route that forgot a
 * row, applied it out of order or keyed it differently would answer something else.
 */
describe("every route applies its rows of ROUTE_RULES", () => {
  let database: TestDatabase;
  let gate: import("@/lib/app").Gatehouse;
  let verifyLink: string;
  let sessionId: string;
  let userId: string;
  let bearer: string;
  let sessionCookie: string;
  let formToken: string;

  beforeAll(async () => {
    announcePeerHeader();
    database = await freshPglite();
    gate = await servedGatehouse(database.url);
    const { registerAccount } = await import("@/lib/users/accounts");
    const created = await registerAccount(gate.prisma, { email: EMAIL, password: "a long enough passphrase" }, gate.hasher, Date.now());
    if (!created.ok) throw new Error("registration failed");
    userId = created.user.id;
    const unconfirmed = await registerAccount(gate.prisma, { email: UNCONFIRMED, password: "a long enough passphrase" }, gate.hasher, null);
    if (!unconfirmed.ok) throw new Error("registration failed");
    verifyLink = await gate.emailTokens.issue(unconfirmed.user.id, "verify_email", 0, Date.now(), 3_600_000);
    bearer = await apiTokenFor(gate, userId);
    // A live browser session, as sign-in makes one, for the account page's forms.
    const session = await gate.sessions.create({
      userId,
      credentialGeneration: 0,
      browser: "Firefox",
      address: "198.51.100.x",
      nowMs: Date.now(),
      expiresAtMs: Date.now() + 3_600_000,
    });
    const { encode } = await import("next-auth/jwt");
    sessionId = session.id;
    formToken = (await import("@/lib/http/form-token")).sessionFormToken(gate.config.session.secret, session.id);
    sessionCookie = `next-auth.session-token=${await encode({ token: { sub: userId, email: EMAIL, sid: session.id }, secret: gate.config.session.secret })}`;
  });

  afterAll(async () => {
    await closeServed(gate);
    await database?.dispose();
  });

  const post = (path: string, address: string, type: string, body: string, headers: Record<string, string> = {}) =>
    new Request(`http://localhost${path}`, { method: "POST", headers: { "content-type": type, [PEER_HEADER]: address, ...headers }, body });
  const get = (path: string, address: string, headers: Record<string, string> = {}) =>
    new Request(`http://localhost${path}`, { headers: { [PEER_HEADER]: address, ...headers } });
  const signInJson = JSON.stringify({ email: EMAIL, password: "x" });
  // An assertion of the right shape (it fails verification later, past the limits).
  const PARSEABLE_ASSERTION = JSON.stringify({
    credential: {
      id: "AA",
      rawId: "AA",
      type: "public-key",
      response: { clientDataJSON: "AA", authenticatorData: "AA", signature: "AA" },
      clientExtensionResults: {},
    },
  });
  const pendingFor = (channel: "browser" | "api") =>
    gate.pendingSignIns.open({
      userId,
      purpose: "sign_in",
      channel,
      step: "second_factor",
      sessionId: "s",
      deviceId: null,
      credentialGeneration: 0,
      route: "/api/auth/callback/credentials",
      browser: null,
      address: "198.51.100.x",
      nowMs: Date.now(),
    });

  const deviceConfirmationFor = (channel: "browser" | "api" = "api") =>
    gate.pendingSignIns.open({
      userId,
      purpose: "sign_in",
      channel,
      step: "device_confirmation",
      codeDigest: null,
      usernameKey: null,
      sealedEmail: null,
      sessionId: "s",
      deviceId: null,
      credentialGeneration: 0,
      route: "/api/v1/authentication/token",
      browser: null,
      address: "198.51.100.x",
      nowMs: Date.now(),
    });

  const SAMPLES: Record<string, Sample> = {
    "/api/auth/callback/credentials": {
      handler: async () => (await import("@/app/api/auth/callback/credentials/route")).POST,
      // From the app's own page, as a browser says: the CSRF rule comes before the body.
      request: async (address) => {
        const body = new URLSearchParams({ email: EMAIL, password: "x", altcha: "", json: "true" }).toString();
        return post("/api/auth/callback/credentials", address, "application/x-www-form-urlencoded", body, {
          "sec-fetch-site": "same-origin",
        });
      },
    },
    "/api/register": {
      handler: async () => (await import("@/app/api/register/route")).POST,
      request: (address) => post("/api/register", address, "application/json", signInJson),
    },
    "/api/altcha/challenge": {
      handler: async () => (await import("@/app/api/altcha/challenge/route")).GET,
      request: (address) => get("/api/altcha/challenge", address),
    },
    "/api/csp-report": {
      handler: async () => (await import("@/app/api/csp-report/route")).POST,
      request: (address) => post("/api/csp-report", address, "application/csp-report", '{"csp-report":{}}'),
    },
    "/api/v1/authentication/token": {
      handler: async () => (await import("@/app/api/v1/authentication/token/route")).POST,
      request: (address) => post("/api/v1/authentication/token", address, "application/json", signInJson),
    },
    "/api/v1/authentication/token/refresh": {
      handler: async () => (await import("@/app/api/v1/authentication/token/refresh/route")).POST,
      request: (address) => post("/api/v1/authentication/token/refresh", address, "application/json", '{"refresh_token":"x"}'),
    },
    "/api/account/password": {
      handler: async () => (await import("@/app/api/account/password/route")).POST,
      request: (address) =>
        post(
          "/api/account/password",
          address,
          "application/x-www-form-urlencoded",
          new URLSearchParams({ formToken, currentPassword: "x", newPassword: "a new passphrase of mine" }).toString(),
          {
            cookie: sessionCookie,
            "sec-fetch-site": "same-origin",
          },
        ),
    },
    "/api/account/sessions/revoke": {
      handler: async () => (await import("@/app/api/account/sessions/revoke/route")).POST,
      request: (address) =>
        post("/api/account/sessions/revoke", address, "application/x-www-form-urlencoded", "kind=browser&id=x", {
          cookie: sessionCookie,
          "sec-fetch-site": "same-origin",
        }),
    },
    "/api/account/devices/forget": {
      handler: async () => (await import("@/app/api/account/devices/forget/route")).POST,
      request: (address) =>
        post("/api/account/devices/forget", address, "application/x-www-form-urlencoded", "id=x", {
          cookie: sessionCookie,
          "sec-fetch-site": "same-origin",
        }),
    },
    "/api/account/delete": {
      handler: async () => (await import("@/app/api/account/delete/route")).POST,
      request: (address) =>
        post("/api/account/delete", address, "application/x-www-form-urlencoded", "confirm=x", {
          cookie: sessionCookie,
          "sec-fetch-site": "same-origin",
        }),
    },
    "/api/account/data": {
      handler: async () => (await import("@/app/api/account/data/route")).POST,
      request: (address) =>
        // Its quota is spent after the form token and a fresh authentication (the session is fresh).
        post("/api/account/data", address, "application/x-www-form-urlencoded", `formToken=${formToken}`, {
          cookie: sessionCookie,
          "sec-fetch-site": "same-origin",
        }),
    },
    "/api/account/passkey-invite/dismiss": {
      handler: async () => (await import("@/app/api/account/passkey-invite/dismiss/route")).POST,
      request: (address) =>
        post("/api/account/passkey-invite/dismiss", address, "application/x-www-form-urlencoded", `formToken=${formToken}`, {
          cookie: sessionCookie,
          "sec-fetch-site": "same-origin",
        }),
    },
    "/api/account/email": {
      handler: async () => (await import("@/app/api/account/email/route")).POST,
      request: (address) =>
        // Its limits are spent after the form token and a fresh authentication (the session is fresh).
        post("/api/account/email", address, "application/x-www-form-urlencoded", `formToken=${formToken}&newEmail=${NEW_EMAIL}`, {
          cookie: sessionCookie,
          "sec-fetch-site": "same-origin",
        }),
    },
    ...Object.fromEntries(
      ["/api/email-change/confirm", "/api/email-change/undo", "/api/not-me"].map((path) => [
        path,
        {
          handler: async () => (await import(`@/app${path}/route`)).POST,
          request: (address: string) => post(path, address, "application/json", '{"token":"x"}'),
        },
      ]),
    ),
    "/api/account/sessions/revoke-others": {
      handler: async () => (await import("@/app/api/account/sessions/revoke-others/route")).POST,
      request: (address) =>
        post("/api/account/sessions/revoke-others", address, "application/x-www-form-urlencoded", "", {
          cookie: sessionCookie,
          "sec-fetch-site": "same-origin",
        }),
    },
    "/api/account/reauthenticate": {
      handler: async () => (await import("@/app/api/account/reauthenticate/route")).POST,
      request: (address) =>
        post(
          "/api/account/reauthenticate",
          address,
          "application/x-www-form-urlencoded",
          new URLSearchParams({ formToken, password: "x" }).toString(),
          {
            cookie: sessionCookie,
            "sec-fetch-site": "same-origin",
          },
        ),
    },
    ...Object.fromEntries(
      [
        "/api/account/passkeys/options",
        "/api/account/passkeys",
        "/api/account/passkeys/rename",
        "/api/account/passkeys/remove",
        "/api/account/reauthenticate/passkey",
        "/api/account/passkeys/second-factor",
        "/api/account/totp/setup",
        "/api/account/totp/confirm",
        "/api/account/totp/remove",
        "/api/account/recovery-codes",
        "/api/account/password/set",
      ].map((path): [string, Sample] => [
        path,
        {
          handler: async () => ((await import(`@/app${path}/route`)) as { POST: Handler }).POST,
          request: (address) =>
            post(
              path,
              address,
              "application/x-www-form-urlencoded",
              new URLSearchParams({ formToken, purpose: "register", id: "x" }).toString(),
              {
                cookie: sessionCookie,
                "sec-fetch-site": "same-origin",
              },
            ),
        },
      ]),
    ),
    // The second step: a live pending sign-in of the account's for each request (its tries are counted).
    ...Object.fromEntries(
      ["/api/auth/second-step", "/api/auth/second-step/passkey", "/api/auth/second-step/passkey/options"].map((path): [string, Sample] => [
        path,
        {
          handler: async () => ((await import(`@/app${path}/route`)) as { POST: Handler }).POST,
          request: async (address) =>
            post(path, address, "application/json", path.endsWith("/passkey") ? PARSEABLE_ASSERTION : '{"code":"123456"}', {
              "sec-fetch-site": "same-origin",
              cookie: `gatehouse-pending-sign-in=${(await pendingFor("browser")).token}`,
            }),
        },
      ]),
    ),
    "/api/auth/second-step/resend": {
      handler: async () => (await import("@/app/api/auth/second-step/resend/route")).POST,
      request: async (address) =>
        post("/api/auth/second-step/resend", address, "application/json", "{}", {
          "sec-fetch-site": "same-origin",
          cookie: `gatehouse-pending-sign-in=${(await deviceConfirmationFor("browser")).token}`,
        }),
    },
    "/api/v1/authentication/token/mfa": {
      handler: async () => (await import("@/app/api/v1/authentication/token/mfa/route")).POST,
      request: async (address) =>
        post(
          "/api/v1/authentication/token/mfa",
          address,
          "application/json",
          JSON.stringify({ mfa_token: (await pendingFor("api")).token, code: "123456" }),
        ),
    },
    "/api/v1/authentication/token/confirm-device": {
      handler: async () => (await import("@/app/api/v1/authentication/token/confirm-device/route")).POST,
      request: async (address) =>
        post(
          "/api/v1/authentication/token/confirm-device",
          address,
          "application/json",
          JSON.stringify({ confirmation_token: (await deviceConfirmationFor()).token, code: "123456" }),
        ),
    },
    "/api/auth/passkey/options": {
      handler: async () => (await import("@/app/api/auth/passkey/options/route")).POST,
      request: (address) => post("/api/auth/passkey/options", address, "application/json", "{}", { "sec-fetch-site": "same-origin" }),
    },
    "/api/auth/passkey": {
      handler: async () => (await import("@/app/api/auth/passkey/route")).POST,
      request: (address) =>
        post("/api/auth/passkey", address, "application/json", '{"credential":null}', { "sec-fetch-site": "same-origin" }),
    },
    "/api/v1/me": {
      handler: async () => (await import("@/app/api/v1/me/route")).GET,
      request: (address) => get("/api/v1/me", address, { authorization: `Bearer ${bearer}` }),
    },
    "/api/v1/reports": {
      handler: async () => (await import("@/app/api/v1/reports/route")).POST,
      request: (address) => post("/api/v1/reports", address, "application/json", "{}", { authorization: `Bearer ${bearer}` }),
    },
    "/api/v1/reports/[id]": {
      handler: async () => (await import("@/app/api/v1/reports/[id]/route")).GET as Handler,
      request: (address) => get("/api/v1/reports/x", address, { authorization: `Bearer ${bearer}` }),
      context: { params: Promise.resolve({ id: "x" }) },
    },
    "/api/password/forgot": {
      handler: async () => (await import("@/app/api/password/forgot/route")).POST,
      request: (address) => post("/api/password/forgot", address, "application/json", JSON.stringify({ email: EMAIL })),
    },
    "/api/email/verification": {
      handler: async () => (await import("@/app/api/email/verification/route")).POST,
      request: (address) => post("/api/email/verification", address, "application/json", JSON.stringify({ email: EMAIL })),
    },
    "/api/unlock/request": {
      handler: async () => (await import("@/app/api/unlock/request/route")).POST,
      request: (address) => post("/api/unlock/request", address, "application/json", JSON.stringify({ email: EMAIL })),
    },
    "/api/password/reset": {
      handler: async () => (await import("@/app/api/password/reset/route")).POST,
      request: (address) => post("/api/password/reset", address, "application/json", '{"token":"x","password":"x"}'),
    },
    "/api/email/verify": {
      handler: async () => (await import("@/app/api/email/verify/route")).POST,
      request: (address) =>
        post("/api/email/verify", address, "application/json", JSON.stringify({ token: verifyLink, password: "x" }), {
          "sec-fetch-site": "same-origin",
        }),
    },
    "/api/register/passkey": {
      handler: async () => (await import("@/app/api/register/passkey/route")).POST,
      request: (address) => post("/api/register/passkey", address, "application/json", JSON.stringify({ email: EMAIL })),
    },
    "/api/new-passkey/options": {
      handler: async () => (await import("@/app/api/new-passkey/options/route")).POST,
      request: (address) => post("/api/new-passkey/options", address, "application/json", '{"token":"x"}'),
    },
    "/api/new-passkey": {
      handler: async () => (await import("@/app/api/new-passkey/route")).POST,
      request: (address) => post("/api/new-passkey", address, "application/json", '{"token":"x"}', { "sec-fetch-site": "same-origin" }),
    },
    "/api/password/reset/preview": {
      handler: async () => (await import("@/app/api/password/reset/preview/route")).POST,
      request: (address) => post("/api/password/reset/preview", address, "application/json", '{"token":"x"}'),
    },
    "/api/email/verify/preview": {
      handler: async () => (await import("@/app/api/email/verify/preview/route")).POST,
      request: (address) => post("/api/email/verify/preview", address, "application/json", '{"token":"x"}'),
    },
    "/api/unlock/preview": {
      handler: async () => (await import("@/app/api/unlock/preview/route")).POST,
      request: (address) => post("/api/unlock/preview", address, "application/json", '{"token":"x"}'),
    },
    "/api/unlock": {
      handler: async () => (await import("@/app/api/unlock/route")).POST,
      request: (address) => post("/api/unlock", address, "application/json", '{"token":"x"}'),
    },
    "/api/v1/download-tokens": {
      handler: async () => (await import("@/app/api/v1/download-tokens/route")).POST,
      request: (address) => post("/api/v1/download-tokens", address, "application/json", "{}", { authorization: `Bearer ${bearer}` }),
    },
  };

  function keyParts(limit: RouteLimit, path: string, address: string): string[] {
    switch (limit.key) {
      case "address":
        return [address];
      case "addressAndRoute":
        return [address, path];
      case "addressAndUsername":
        return [address, path === "/api/email/verify" ? UNCONFIRMED : EMAIL];
      case "user":
        return [userId];
      case "session":
        return ["session", sessionId];
      case "email":
        return ["email", gate.usernameKey(NEW_EMAIL)];
    }
  }

  /** Spends a bucket the way requests would, until it refuses. */
  async function spend(limit: RouteLimit, parts: string[]) {
    for (let i = 0; i < 10_000; i++) if (!(await gate.limiter.consume(limit.policy, parts)).allowed) return;
    throw new Error(`${limit.policy} never refused`);
  }

  const limitedRules = ROUTE_RULES.flatMap((rule) => ("limits" in rule ? [{ ...rule, limits: rule.limits, refusal: rule.refusal }] : []));

  it("has a sample request for every limited route", () => {
    expect(Object.keys(SAMPLES).sort()).toEqual(limitedRules.map((rule) => rule.path).sort());
  });

  for (const rule of limitedRules) {
    rule.limits.forEach((limit, index) => {
      // A row that overflows (mailbox first) refuses only once its overflow is spent too.
      const spent = limit.overflow ? `${limit.policy} and its overflow ${limit.overflow}` : limit.policy;
      it(`${rule.path}: refuses once ${spent} (row ${index + 1}, by ${limit.key}) is spent`, async () => {
        const sample = SAMPLES[rule.path]!;
        const address = freshAddress();
        // A fast-refilling bucket (api: 20/s, a token every 50 ms) can refill between the spend and
        // the request on a loaded machine: then spend it again. A route without the row never refuses.
        let res!: Response;
        // Its first row (per account) was spent by the test before: given back, so only this row can refuse.
        if (limit.key === "email") for (let i = 0; i < 10; i++) await gate.limiter.consume(rule.limits[0]!.policy, [userId], { cost: -1 });
        for (let attempt = 0; attempt < 3; attempt++) {
          await spend(limit, keyParts(limit, rule.path, address));
          if (limit.overflow) await spend({ policy: limit.overflow, key: limit.key }, keyParts(limit, rule.path, address));
          res = await (await sample.handler())(await sample.request(address), sample.context);
          if (res.status >= 300) break;
        }
        if (rule.refusal === "drop") {
          expect(res.status).toBe(204);
        } else {
          expect(res.status).toBe(429);
          expect(await res.json()).toMatchObject({ error: "rate_limited" });
          expect(Number(res.headers.get("Retry-After"))).toBeGreaterThanOrEqual(1);
          if (rule.refusal === "api") expect(res.headers.get("RateLimit-Policy")).toContain(`"${limit.policy}"`);
        }
      });
    });
  }
});

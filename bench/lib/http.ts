import http from "node:http";
import type { Challenge } from "altcha-lib";
import { solve } from "@/tests/helpers/altcha";

/**
 * A small keep-alive HTTP client for the drills. node:http rather than fetch: it costs the
 * (CPU-sharing) bench process less per request and sets any header, X-Forwarded-For included.
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

export type Reply = { status: number; headers: http.IncomingHttpHeaders; text: string; ms: number };

export type Outgoing = { method: "GET" | "POST"; path: string; headers?: Record<string, string>; body?: string };

export function request(baseUrl: string, outgoing: Outgoing, timeoutMs = 60_000): Promise<Reply> {
  const url = new URL(outgoing.path, baseUrl);
  if (url.hostname !== "127.0.0.1" && url.hostname !== "localhost" && url.hostname !== "[::1]") {
    return Promise.reject(new Error(`the bench only talks to loopback, not ${url.hostname}`));
  }
  return send(url, outgoing, timeoutMs, true);
}

/**
 * One request. A kept-alive socket the server closes (its keep-alive timeout, 5 s) just as a
 * request goes out on it fails with ECONNRESET before the server read the request: that one is
 * sent again, once, on a new socket (the case Node's http documentation retries).
 */
function send(url: URL, outgoing: Outgoing, timeoutMs: number, retryStale: boolean): Promise<Reply> {
  const startedMs = performance.now();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...outgoing.headers };
    if (outgoing.body !== undefined) headers["content-length"] = String(Buffer.byteLength(outgoing.body));
    const req = http.request(url, { method: outgoing.method, headers, agent, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString("utf8"),
          ms: performance.now() - startedMs,
        }),
      );
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`${outgoing.method} ${outgoing.path} timed out after ${timeoutMs} ms`)));
    req.on("error", (error: NodeJS.ErrnoException) => {
      if (retryStale && req.reusedSocket && error.code === "ECONNRESET") send(url, outgoing, timeoutMs, false).then(resolve, reject);
      else reject(error);
    });
    req.end(outgoing.body);
  });
}

export function jsonOf(reply: Reply): Record<string, unknown> {
  try {
    return JSON.parse(reply.text) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** `name=value` pairs of the Set-Cookie headers, joined for a Cookie header. */
function cookiesOf(reply: Reply): string {
  return (reply.headers["set-cookie"] ?? []).map((cookie) => cookie.split(";", 1)[0]).join("; ");
}

/**
 * next-auth's double-submit CSRF pair, which only a build before issue 56 asks for (the A/B's
 * older builds); a build since has no such round trip (404) and gets an empty pair it ignores:
 * its CSRF rule is the post's origin (signInHeaders says "same-origin", as the page's browser does).
 */
export type Csrf = { cookie: string; token: string };

export async function getCsrf(baseUrl: string): Promise<Csrf> {
  const reply = await request(baseUrl, { method: "GET", path: "/api/auth/csrf" });
  if (reply.status === 404) return { cookie: "", token: "" };
  const token = jsonOf(reply).csrfToken;
  if (reply.status !== 200 || typeof token !== "string") throw new Error(`GET /api/auth/csrf answered ${reply.status}`);
  return { cookie: cookiesOf(reply), token };
}

/**
 * The known-device cookie's names: plain over the bench's http loopback since issue 56 (the cookie
 * room's one rule, lib/http/cookies.ts: prefixed only under an https public URL), `__Host-` in a
 * production build before it (the A/B's older builds). The bench sends both; each build reads its own.
 */
const DEVICE_COOKIES = ["gatehouse-device", "__Host-gatehouse-device"];

function deviceCookies(deviceToken: string): string {
  return DEVICE_COOKIES.map((name) => `${name}=${deviceToken}`).join("; ");
}

function deviceCookieHeader(deviceToken: string | undefined): Record<string, string> {
  return deviceToken ? { cookie: deviceCookies(deviceToken) } : {};
}

/**
 * Fetches a challenge as client `address` (through the trusted-proxy header); with a device token,
 * as a known device (which the server always gives the base size).
 */
export async function getChallenge(baseUrl: string, address: string, deviceToken?: string): Promise<Challenge> {
  const reply = await request(baseUrl, {
    method: "GET",
    path: "/api/altcha/challenge",
    headers: { "x-forwarded-for": address, ...deviceCookieHeader(deviceToken) },
  });
  if (reply.status !== 200) throw new Error(`GET /api/altcha/challenge answered ${reply.status}: ${reply.text.slice(0, 200)}`);
  return JSON.parse(reply.text) as Challenge;
}

/** A solved ALTCHA payload, as the widget would submit it. */
export async function solvedPayload(baseUrl: string, address: string, deviceToken?: string): Promise<string> {
  return solve(await getChallenge(baseUrl, address, deviceToken));
}

/**
 * The counter a payload's solution found: the challenge's secret number, so the work the solver
 * did (the size is not in the challenge; a counter above the base size means a raised level).
 */
export function solvedCounter(payload: string): number {
  try {
    const decoded = JSON.parse(Buffer.from(payload, "base64").toString("utf8")) as { solution?: { counter?: unknown } };
    return typeof decoded.solution?.counter === "number" ? decoded.solution.counter : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** `deviceToken`: the known-device cookie to present (its newest value); absent: a new device. */
export type SignInAttempt = { address: string; email: string; password: string; altcha: string; csrf: Csrf; deviceToken?: string };

export function signInBody(attempt: Omit<SignInAttempt, "address" | "csrf" | "deviceToken"> & { csrfToken: string }): string {
  return new URLSearchParams({
    email: attempt.email,
    password: attempt.password,
    csrfToken: attempt.csrfToken,
    altcha: attempt.altcha,
    callbackUrl: "/",
    json: "true",
  }).toString();
}

export const SIGN_IN_PATH = "/api/auth/callback/credentials";

export function signInHeaders(address: string, csrf: Csrf, deviceToken?: string): Record<string, string> {
  const cookie = [csrf.cookie, deviceToken ? deviceCookies(deviceToken) : ""].filter(Boolean).join("; ");
  // From the sign-in page's own origin, as its browser says (Fetch Metadata): the CSRF rule.
  return {
    "content-type": "application/x-www-form-urlencoded",
    ...(cookie ? { cookie } : {}),
    "sec-fetch-site": "same-origin",
    "x-forwarded-for": address,
  };
}

/**
 * One sign-in POST. Outcomes: "signed-in" (200), "invalid" (next-auth's 401 after Argon2id),
 * or a refusal by one of the layers in front of it (429, 400, 403, 503).
 */
export type SignInOutcome = {
  status: number;
  kind: "signed-in" | "invalid" | "rate_limited" | "locked" | "captcha_invalid" | "csrf_invalid" | "busy" | "server_error" | "other";
  reason?: string;
  retryAfterSeconds?: number;
  /** A lock refusal that names its end (only a known device's own lock should). */
  lockedUntil?: string;
  /** The device cookie the answer set (a success rotates it): the value to present next time. */
  deviceToken?: string;
  ms: number;
  startedMs: number;
  endedMs: number;
};

function deviceTokenSet(reply: Reply): string | undefined {
  for (const cookie of reply.headers["set-cookie"] ?? []) {
    const [pair = ""] = cookie.split(";", 1);
    const at = pair.indexOf("=");
    if (at > 0 && DEVICE_COOKIES.includes(pair.slice(0, at)) && at < pair.length - 1) return pair.slice(at + 1);
  }
  return undefined;
}

export async function signIn(baseUrl: string, attempt: SignInAttempt): Promise<SignInOutcome> {
  const startedMs = performance.now();
  const reply = await request(baseUrl, {
    method: "POST",
    path: SIGN_IN_PATH,
    headers: signInHeaders(attempt.address, attempt.csrf, attempt.deviceToken),
    body: signInBody({ email: attempt.email, password: attempt.password, altcha: attempt.altcha, csrfToken: attempt.csrf.token }),
  });
  const endedMs = performance.now();
  const body = jsonOf(reply);
  const base = { status: reply.status, ms: reply.ms, startedMs, endedMs, deviceToken: deviceTokenSet(reply) };
  // next-auth answers a JSON sign-in with 200 { url } in more cases than success (a CSRF failure
  // sends the client back to the sign-in page); only a new session cookie means signed in.
  if (reply.status === 200) {
    const session = (reply.headers["set-cookie"] ?? []).some((cookie) => /session-token=[^;]/.test(cookie));
    return { ...base, kind: session ? "signed-in" : "other", reason: session ? undefined : String(body.url ?? "") };
  }
  // The error names a device confirmation (a right or wrong password alike) apart from a plain 401.
  if (reply.status === 401) return { ...base, kind: "invalid", reason: typeof body.error === "string" ? body.error : undefined };
  const error = typeof body.error === "string" ? body.error : "";
  const retryAfterSeconds = Number(reply.headers["retry-after"] ?? Number.NaN);
  const kind =
    (["rate_limited", "locked", "captcha_invalid", "csrf_invalid", "busy"] as const).find((known) => known === error) ??
    (reply.status >= 500 ? "server_error" : "other");
  const lockedUntil = typeof body.lockedUntil === "string" ? body.lockedUntil : undefined;
  return { ...base, kind, reason: typeof body.reason === "string" ? body.reason : undefined, retryAfterSeconds, lockedUntil };
}

/**
 * One POST /api/v1/authentication/token, as an app sends it. "signed-in": a token pair (and the
 * device token that makes the app a known device from then on); a 401 names its error
 * (`invalid_credentials`, `device_confirmation_required` with a `confirmation_token`, …).
 */
export type TokenSignInOutcome = {
  status: number;
  kind: "signed-in" | "invalid" | "refused" | "server_error";
  error?: string;
  confirmationToken?: string;
  deviceToken?: string;
  retryAfterSeconds?: number;
  ms: number;
};

export const TOKEN_PATH = "/api/v1/authentication/token";

function tokenOutcome(reply: Reply): TokenSignInOutcome {
  const body = jsonOf(reply);
  const text = (name: string) => (typeof body[name] === "string" ? body[name] : undefined);
  const retryAfterSeconds = Number(reply.headers["retry-after"] ?? Number.NaN);
  const kind =
    reply.status === 200 && text("access_token")
      ? "signed-in"
      : reply.status === 401
        ? "invalid"
        : reply.status >= 500 && reply.status !== 503
          ? "server_error"
          : "refused";
  return {
    status: reply.status,
    kind,
    error: text("error"),
    confirmationToken: text("confirmation_token"),
    deviceToken: text("device_token"),
    retryAfterSeconds,
    ms: reply.ms,
  };
}

export async function tokenSignIn(baseUrl: string, attempt: Omit<SignInAttempt, "csrf">): Promise<TokenSignInOutcome> {
  const { address, email, password, altcha, deviceToken } = attempt;
  return tokenOutcome(
    await request(baseUrl, {
      method: "POST",
      path: TOKEN_PATH,
      headers: { "content-type": "application/json", "x-forwarded-for": address },
      body: JSON.stringify({ email, password, altcha, ...(deviceToken ? { device_token: deviceToken } : {}) }),
    }),
  );
}

/** The mailed code for an app's pending device confirmation: tokens and a device token, or a refusal. */
export async function confirmDeviceByApi(baseUrl: string, address: string, confirmationToken: string, code: string) {
  return tokenOutcome(
    await request(baseUrl, {
      method: "POST",
      path: `${TOKEN_PATH}/confirm-device`,
      headers: { "content-type": "application/json", "x-forwarded-for": address },
      body: JSON.stringify({ confirmation_token: confirmationToken, code }),
    }),
  );
}

export async function register(baseUrl: string, address: string, email: string, password: string): Promise<Reply> {
  const altcha = await solvedPayload(baseUrl, address);
  return request(baseUrl, {
    method: "POST",
    path: "/api/register",
    headers: { "content-type": "application/json", "x-forwarded-for": address },
    body: JSON.stringify({ email, password, altcha }),
  });
}

/** Frees the keep-alive sockets so the bench process can exit. */
export function closeConnections(): void {
  agent.destroy();
}

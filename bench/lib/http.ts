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
  const startedMs = performance.now();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...outgoing.headers };
    if (outgoing.body !== undefined) headers["content-length"] = String(Buffer.byteLength(outgoing.body));
    const req = http.request(url, { method: outgoing.method, headers, agent, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString("utf8"), ms: performance.now() - startedMs }),
      );
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`${outgoing.method} ${outgoing.path} timed out after ${timeoutMs} ms`)));
    req.on("error", reject);
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

/** next-auth's double-submit CSRF pair; not bound to an address, so one pair serves many requests. */
export type Csrf = { cookie: string; token: string };

export async function getCsrf(baseUrl: string): Promise<Csrf> {
  const reply = await request(baseUrl, { method: "GET", path: "/api/auth/csrf" });
  const token = jsonOf(reply).csrfToken;
  if (reply.status !== 200 || typeof token !== "string") throw new Error(`GET /api/auth/csrf answered ${reply.status}`);
  return { cookie: cookiesOf(reply), token };
}

/** Fetches a challenge as client `address` (through the trusted-proxy header). */
export async function getChallenge(baseUrl: string, address: string): Promise<Challenge> {
  const reply = await request(baseUrl, { method: "GET", path: "/api/altcha/challenge", headers: { "x-forwarded-for": address } });
  if (reply.status !== 200) throw new Error(`GET /api/altcha/challenge answered ${reply.status}: ${reply.text.slice(0, 200)}`);
  return JSON.parse(reply.text) as Challenge;
}

/** A solved ALTCHA payload, as the widget would submit it. */
export async function solvedPayload(baseUrl: string, address: string): Promise<string> {
  return solve(await getChallenge(baseUrl, address));
}

export type SignInAttempt = { address: string; email: string; password: string; altcha: string; csrf: Csrf };

export function signInBody(attempt: Omit<SignInAttempt, "address" | "csrf"> & { csrfToken: string }): string {
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

export function signInHeaders(address: string, csrf: Csrf): Record<string, string> {
  return { "content-type": "application/x-www-form-urlencoded", cookie: csrf.cookie, "x-forwarded-for": address };
}

/**
 * One sign-in POST. Outcomes: "signed-in" (200), "invalid" (next-auth's 401 after Argon2id),
 * or a refusal by one of the layers in front of it (429, 400, 503).
 */
export type SignInOutcome = {
  status: number;
  kind: "signed-in" | "invalid" | "rate_limited" | "locked" | "captcha_invalid" | "busy" | "server_error" | "other";
  reason?: string;
  retryAfterSeconds?: number;
  ms: number;
  startedMs: number;
  endedMs: number;
};

export async function signIn(baseUrl: string, attempt: SignInAttempt): Promise<SignInOutcome> {
  const startedMs = performance.now();
  const reply = await request(baseUrl, {
    method: "POST",
    path: SIGN_IN_PATH,
    headers: signInHeaders(attempt.address, attempt.csrf),
    body: signInBody({ ...attempt, csrfToken: attempt.csrf.token }),
  });
  const endedMs = performance.now();
  const body = jsonOf(reply);
  const base = { status: reply.status, ms: reply.ms, startedMs, endedMs };
  // next-auth answers a JSON sign-in with 200 { url } in more cases than success (a CSRF failure
  // sends the client back to the sign-in page); only a new session cookie means signed in.
  if (reply.status === 200) {
    const session = (reply.headers["set-cookie"] ?? []).some((cookie) => /session-token=[^;]/.test(cookie));
    return { ...base, kind: session ? "signed-in" : "other", reason: session ? undefined : String(body.url ?? "") };
  }
  if (reply.status === 401) return { ...base, kind: "invalid" };
  const error = typeof body.error === "string" ? body.error : "";
  const retryAfterSeconds = Number(reply.headers["retry-after"] ?? Number.NaN);
  const kind = (["rate_limited", "locked", "captcha_invalid", "busy"] as const).find((known) => known === error) ?? (reply.status >= 500 ? "server_error" : "other");
  return { ...base, kind, reason: typeof body.reason === "string" ? body.reason : undefined, retryAfterSeconds };
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

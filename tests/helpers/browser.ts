import { solve } from "./altcha";
import { freshAddress, PEER_HEADER } from "./peer";

/** The browser's routes under test. */
const routes = {
  session: () => import("@/app/api/auth/session/route"),
  signIn: () => import("@/app/api/auth/callback/credentials/route"),
  challenge: () => import("@/app/api/altcha/challenge/route"),
};

/**
 * What a browser says of a post from the app's own page (Fetch Metadata), unless the test's own
 * headers speak of the site or origin (a cross-site post, an old browser's Origin).
 */
function fromOwnPage(headers: Record<string, string> = {}): Record<string, string> {
  return "sec-fetch-site" in headers || "origin" in headers ? {} : { "sec-fetch-site": "same-origin" };
}

/** `name=value; …` of every cookie a response sets, as a browser would send them back. */
export function cookiesOf(res: Response): string {
  return res.headers
    .getSetCookie()
    .map((cookie) => cookie.split(";")[0]!)
    .join("; ");
}

/** A fresh solved ALTCHA payload from the real challenge route. */
export async function altchaPayload(): Promise<string> {
  const res = await (
    await routes.challenge()
  ).GET(new Request("http://localhost/api/altcha/challenge", { headers: { [PEER_HEADER]: freshAddress() } }));
  return solve(await res.json());
}

export type BrowserSignIn = {
  address?: string;
  /** Extra or replacing form fields. */
  fields?: Record<string, string>;
  /** A raw body instead of the form built from the fields. */
  body?: string;
  contentType?: string;
  url?: string;
  /** More cookies to send, e.g. a known-device cookie (`name=value`). */
  cookie?: string;
  userAgent?: string;
  /** More request headers (Accept-Language, say); a Sec-Fetch-Site or Origin replaces the page's own. */
  headers?: Record<string, string>;
};

/** POST /api/auth/callback/credentials as the sign-in page sends it: from the page's origin, a solved ALTCHA, json=true. */
export async function browserSignIn(email: string, password: string, options: BrowserSignIn = {}): Promise<Response> {
  const address = options.address ?? freshAddress();
  const fields = { email, password, altcha: await altchaPayload(), callbackUrl: "/", json: "true", ...options.fields };
  const request = new Request(options.url ?? "http://localhost/api/auth/callback/credentials", {
    method: "POST",
    headers: {
      "content-type": options.contentType ?? "application/x-www-form-urlencoded",
      ...(options.cookie ? { cookie: options.cookie } : {}),
      ...fromOwnPage(options.headers),
      [PEER_HEADER]: address,
      ...(options.userAgent ? { "user-agent": options.userAgent } : {}),
      ...options.headers,
    },
    body: options.body ?? new URLSearchParams(fields).toString(),
  });
  return (await routes.signIn()).POST(request);
}

/** The session cookie a sign-in response set, or null. */
export function sessionCookieOf(res: Response): string | null {
  return res.headers.getSetCookie().find((cookie) => /session-token=[^;]+/.test(cookie)) ?? null;
}

/** The value of the known-device cookie a response set, or null. */
export function deviceCookieOf(res: Response): string | null {
  const header = res.headers.getSetCookie().find((cookie) => /^(__Host-)?gatehouse-device=/.test(cookie));
  return header ? header.split(";")[0]!.split("=")[1]! : null;
}

/** POST /api/v1/authentication/token as an app does, with a fresh solved ALTCHA. */
export async function tokenSignIn(
  email: string,
  password: string,
  options: { address?: string; deviceToken?: string; headers?: Record<string, string>; altcha?: string } = {},
): Promise<Response> {
  const altcha = options.altcha ?? (await altchaPayload());
  const body = { email, password, altcha, ...(options.deviceToken ? { device_token: options.deviceToken } : {}) };
  const request = new Request("http://localhost/api/v1/authentication/token", {
    method: "POST",
    headers: { "content-type": "application/json", [PEER_HEADER]: options.address ?? freshAddress(), ...options.headers },
    body: JSON.stringify(body),
  });
  return (await import("@/app/api/v1/authentication/token/route")).POST(request);
}

/** Creates an account directly (registration has its own suite), failing the test if it cannot. */
export async function createAccount(gate: import("@/lib/app").Gatehouse, email: string, password: string): Promise<string> {
  const { registerAccount } = await import("@/lib/users/accounts");
  const created = await registerAccount(gate.prisma, { email, password }, gate.hasher, Date.now());
  if (!created.ok) throw new Error(`could not create ${email}`);
  return created.user.id;
}

/** `name=value` of the session cookie a response set (as a copy of it would be replayed), or null. */
export function sessionPairOf(res: Response): string | null {
  return sessionCookieOf(res)?.split(";")[0] ?? null;
}

/** Signs in through the real sign-in route and returns the browser's session cookie (`name=value`). */
export async function signedInBrowser(email: string, password: string, options: BrowserSignIn = {}): Promise<string> {
  const res = await browserSignIn(email, password, options);
  const pair = sessionPairOf(res);
  if (res.status !== 200 || !pair) throw new Error(`sign-in for ${email} failed: ${res.status}`);
  return pair;
}

/** GET /api/auth/session with a cookie, as the browser's next-auth client does. */
export async function sessionWith(cookie: string): Promise<{ status: number; body: Record<string, unknown>; cleared: boolean }> {
  const res = await (
    await routes.session()
  ).GET(new Request("http://localhost/api/auth/session", { headers: { cookie, [PEER_HEADER]: freshAddress() } }));
  const cleared = res.headers.getSetCookie().some((value) => /session-token=;/.test(value));
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, cleared };
}

export type BrowserSignOut = Pick<BrowserSignIn, "fields" | "body" | "contentType" | "headers">;

/**
 * POST /api/auth/signout as the sign-out form sends it: from the page's origin, with the session
 * cookie and that session's form token (a `formToken` in `fields` replaces it).
 */
export async function browserSignOut(sessionCookie: string, options: BrowserSignOut = {}): Promise<Response> {
  const gate = await (await import("@/lib/app")).gatehouse();
  const { sessionFormToken } = await import("@/lib/http/form-token");
  // A cookie that is no session has no token (the route then checks none).
  const sid = await sessionIdOf(gate, sessionCookie).catch(() => undefined);
  const formToken = sid ? sessionFormToken(gate.config.session.secret, sid) : "";
  const request = new Request("http://localhost/api/auth/signout", {
    method: "POST",
    headers: {
      "content-type": options.contentType ?? "application/x-www-form-urlencoded",
      cookie: sessionCookie,
      ...fromOwnPage(options.headers),
      [PEER_HEADER]: freshAddress(),
      ...options.headers,
    },
    body: options.body ?? new URLSearchParams({ formToken, callbackUrl: "/", json: "true", ...options.fields }).toString(),
  });
  return (await import("@/app/api/auth/signout/route")).POST(request);
}

/** POST /api/v1/authentication/token/refresh as an app does. */
export async function refreshTokens(refreshToken: string): Promise<Response> {
  const request = new Request("http://localhost/api/v1/authentication/token/refresh", {
    method: "POST",
    headers: { "content-type": "application/json", [PEER_HEADER]: freshAddress() },
    body: JSON.stringify({ refresh_token: refreshToken }),
  });
  return (await import("@/app/api/v1/authentication/token/refresh/route")).POST(request);
}

type Gate = import("@/lib/app").Gatehouse;

/** The browser session id (`sid`) a session cookie (`name=value`) carries. */
export async function sessionIdOf(gate: Gate, cookie: string): Promise<string> {
  const { decode } = await import("next-auth/jwt");
  return (await decode({ token: cookie.split("=")[1]!, secret: gate.config.session.secret }))!.sid as string;
}

/**
 * A form post from the account page, as the page sends it: the session cookie, same origin, and
 * the session's form token (a `formToken` in `fields` replaces it); `headers` add or replace.
 */
export async function accountFormPost(
  gate: Gate,
  path: string,
  cookie: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  const { sessionFormToken } = await import("@/lib/http/form-token");
  const route = (await import(`@/app${path}/route`)) as { POST: (request: Request) => Promise<Response> };
  const { NextRequest } = await import("next/server");
  return route.POST(
    new NextRequest(`http://localhost${path}`, {
      method: "POST",
      headers: {
        cookie,
        "content-type": "application/x-www-form-urlencoded",
        "sec-fetch-site": "same-origin",
        [PEER_HEADER]: freshAddress(),
        ...headers,
      },
      body: new URLSearchParams({
        formToken: sessionFormToken(gate.config.session.secret, await sessionIdOf(gate, cookie)),
        ...fields,
      }).toString(),
    }),
  );
}

/**
 * A sign-in answer's body without what differs per request (a pending sign-in's token and its
 * seconds left), for comparing two answers that must tell nothing apart.
 */
export function comparableAnswer(body: Record<string, unknown>): Record<string, unknown> {
  const differing = new Set(["confirmation_token", "mfa_token", "expires_in", "expiresInSeconds"]);
  return Object.fromEntries(Object.entries(body).filter(([key]) => !differing.has(key)));
}

/**
 * The owner's password reset through its route, with a fresh link for the account's current
 * credential generation, as the mailed one would carry; `fields` adds to the form (removePasskeys).
 */
export async function resetByLink(gate: Gate, userId: string, password: string, fields: Record<string, unknown> = {}): Promise<Response> {
  const { NextRequest } = await import("next/server");
  const { POST } = await import("@/app/api/password/reset/route");
  const { credentialGeneration } = await gate.prisma.user.findUniqueOrThrow({ where: { id: userId } });
  const token = await gate.emailTokens.issue(userId, "reset_password", credentialGeneration, Date.now(), 3_600_000);
  return POST(
    new NextRequest("http://localhost/api/password/reset", {
      method: "POST",
      headers: { "content-type": "application/json", [PEER_HEADER]: freshAddress() },
      body: JSON.stringify({ token, password, ...fields }),
    }),
  );
}

import { createHash, timingSafeEqual } from "node:crypto";
import { decode, encode, type JWT } from "next-auth/jwt";
import type { CookieOption } from "next-auth";
import type { AppConfig } from "@/lib/config/env";
import { appOrigin } from "@/lib/http/same-origin";

/**
 * The one place that knows next-auth's cookies: their names, their attributes, the CSRF
 * double-submit format and the session JWT. Every route, page and test that needs one of them
 * asks here, so a name or a prefix cannot differ between the code that sets a cookie and the code
 * that reads it.
 *
 * Under an https NEXTAUTH_URL every one is `__Host-` prefixed: the browser then insists on Secure,
 * Path=/ and no Domain, so a sibling subdomain can neither plant nor shadow it. (next-auth's own
 * default is `__Secure-` for the session and callback URL, which a sibling can still set.)
 */
export type CookieName = "sessionToken" | "csrfToken" | "callbackUrl";

const BASE_NAMES: Record<CookieName, string> = {
  sessionToken: "next-auth.session-token",
  csrfToken: "next-auth.csrf-token",
  callbackUrl: "next-auth.callback-url",
};

type UrlSettings = { http: Pick<AppConfig["http"], "publicUrl"> };
type SecretSettings = UrlSettings & { session: Pick<AppConfig["session"], "secret"> };
type SessionCookieSettings = UrlSettings & { session: Pick<AppConfig["session"], "secret" | "maxAgeSeconds"> };

/** Whether the app's public URL is https: the cookies are then Secure and `__Host-`. */
export function secureCookies(config: UrlSettings): boolean {
  return appOrigin(config.http.publicUrl).startsWith("https://");
}

export function cookieName(config: UrlSettings, which: CookieName): string {
  return `${secureCookies(config) ? "__Host-" : ""}${BASE_NAMES[which]}`;
}

/** next-auth's `cookies` option: the same names, so what next-auth sets is what this file reads. */
export function nextAuthCookies(config: UrlSettings): Record<CookieName, CookieOption> {
  const secure = secureCookies(config);
  const options = { httpOnly: true, sameSite: "lax", path: "/", secure } as const;
  return {
    sessionToken: { name: cookieName(config, "sessionToken"), options },
    csrfToken: { name: cookieName(config, "csrfToken"), options },
    callbackUrl: { name: cookieName(config, "callbackUrl"), options: { ...options, httpOnly: false } },
  };
}

type Jar = Record<string, string | undefined>;

/** A request's cookies as `{ name: value }` (a route's `request.cookies`, or a page's `cookies()`). */
export function cookieJar(cookies: { getAll(): { name: string; value: string }[] }): Record<string, string> {
  return Object.fromEntries(cookies.getAll().map((cookie) => [cookie.name, cookie.value]));
}

/**
 * The CSRF token of next-auth's double-submit cookie (`<token>|sha256(<token><secret>)`), when
 * the cookie is one this server set: the sign-out form puts it in a hidden field.
 */
export function csrfTokenOfCookies(config: SecretSettings, cookies: Jar): string | null {
  const [token, hash] = (cookies[cookieName(config, "csrfToken")] ?? "").split("|");
  if (!token || !hash) return null;
  const expected = createHash("sha256").update(`${token}${config.session.secret}`).digest("hex");
  return equal(hash, expected) ? token : null;
}

/** next-auth's own CSRF rule for a POST: the form's token is the one in this server's cookie. */
export function csrfVerified(config: SecretSettings, cookies: Jar, formToken: string): boolean {
  const token = csrfTokenOfCookies(config, cookies);
  return token !== null && equal(token, formToken);
}

function equal(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

export type SessionClaims = { sub: string; email: string; sid: string };

/** A `Set-Cookie` value for a new session JWT: the cookie next-auth would set, same name, attributes and lifetime. */
export async function sessionCookie(config: SessionCookieSettings, claims: SessionClaims, nowMs: number): Promise<string> {
  const maxAgeSeconds = config.session.maxAgeSeconds;
  const token = await encode({ token: claims, secret: config.session.secret!, maxAge: maxAgeSeconds });
  return serialize(config, cookieName(config, "sessionToken"), token, new Date(nowMs + maxAgeSeconds * 1000));
}

/** A `Set-Cookie` value that removes the session cookie. */
export function clearedSessionCookie(config: UrlSettings): string {
  return serialize(config, cookieName(config, "sessionToken"), "", new Date(0), 0);
}

function serialize(config: UrlSettings, name: string, value: string, expires: Date, maxAgeSeconds?: number): string {
  const secure = secureCookies(config);
  return [
    `${name}=${value}`,
    "Path=/",
    `Expires=${expires.toUTCString()}`,
    ...(maxAgeSeconds === undefined ? [] : [`Max-Age=${maxAgeSeconds}`]),
    "HttpOnly",
    "SameSite=Lax",
    ...(secure ? ["Secure"] : []),
  ].join("; ");
}

/**
 * The claims of a request's session cookie, decoded and signature-checked, or null. Only the
 * cookie is read (next-auth's getToken would also take a Bearer header as a session token).
 * Nothing in the claims is trusted until the session record agrees (liveSession).
 */
export async function sessionClaimsOfCookies(config: SecretSettings, cookies: Jar): Promise<JWT | null> {
  const token = cookies[cookieName(config, "sessionToken")];
  if (!token) return null;
  try {
    return await decode({ token, secret: config.session.secret! });
  } catch {
    return null;
  }
}

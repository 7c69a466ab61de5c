import { decode, encode, type JWT } from "next-auth/jwt";
import type { CookieOption } from "next-auth";
import type { AppConfig } from "@/lib/config/env";
import { cookieName, secureCookies, setCookieValue } from "@/lib/http/cookies";

/**
 * The session cookie's value, in next-auth's format: an encrypted JWT (next-auth/jwt) that
 * next-auth's own session endpoint reads back. Its name and attributes are the cookie room's
 * (lib/http/cookies.ts); next-auth is told the same name, so what it reads is what this file wrote.
 */
type UrlSettings = { http: Pick<AppConfig["http"], "publicUrl"> };
type SecretSettings = UrlSettings & { session: Pick<AppConfig["session"], "secret"> };
type SessionCookieSettings = UrlSettings & { session: Pick<AppConfig["session"], "secret" | "maxAgeSeconds"> };

/** next-auth's `cookies` option: the session cookie under the cookie room's name and attributes. */
export function nextAuthCookies(config: UrlSettings): { sessionToken: CookieOption } {
  const options = { httpOnly: true, sameSite: "lax", path: "/", secure: secureCookies(config) } as const;
  return { sessionToken: { name: cookieName(config, "session"), options } };
}

type Jar = Record<string, string | undefined>;

export type SessionClaims = { sub: string; email: string; sid: string };

/** A `Set-Cookie` value for a new session JWT: the cookie next-auth would set, same name, attributes and lifetime. */
export async function sessionCookie(config: SessionCookieSettings, claims: SessionClaims, nowMs: number): Promise<string> {
  const maxAgeSeconds = config.session.maxAgeSeconds;
  const token = await encode({ token: claims, secret: config.session.secret!, maxAge: maxAgeSeconds });
  return setCookieValue(config, "session", token, { expiresAtMs: nowMs + maxAgeSeconds * 1000 });
}

/** A `Set-Cookie` value that removes the session cookie. */
export function clearedSessionCookie(config: UrlSettings): string {
  return setCookieValue(config, "session", "", { expiresAtMs: 0 });
}

/**
 * The claims of a request's session cookie, decoded and signature-checked, or null. Only the
 * cookie is read (next-auth's getToken would also take a Bearer header as a session token).
 * Nothing in the claims is trusted until the session record agrees (liveSession).
 */
export async function sessionClaimsOfCookies(config: SecretSettings, cookies: Jar): Promise<JWT | null> {
  const token = cookies[cookieName(config, "session")];
  if (!token) return null;
  try {
    return await decode({ token, secret: config.session.secret! });
  } catch {
    return null;
  }
}

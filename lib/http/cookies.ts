import { NextRequest } from "next/server";
import type { AppConfig } from "@/lib/config/env";
import { appOrigin } from "./same-origin";

/**
 * The cookie room: every cookie Gatehouse sets, its name, its path and its attributes, with one
 * rule for Secure and the prefix. Under an https public URL (NEXTAUTH_URL) each is Secure and
 * prefixed: `__Host-` (the browser then insists on Secure, Path=/ and no Domain, so a sibling
 * subdomain can neither plant nor shadow it), or `__Secure-` for the one cookie scoped to a page
 * (`__Host-` needs Path=/). Over plain http (local development, the bench's loopback) each has its
 * plain name. All are HttpOnly (no script reads one) and SameSite=Lax. The routes and pages that
 * set or read a cookie ask here, so the code that sets one and the code that reads it cannot
 * disagree on its name.
 */
const COOKIES = {
  /** The browser session's JWT, in next-auth's name and format (lib/auth/next-auth/session-cookie.ts). */
  session: { base: "next-auth.session-token", path: "/" },
  /** The known device (OWASP device cookie). */
  device: { base: "gatehouse-device", path: "/" },
  /** The pending sign-in that waits for its second step: only the browser that passed the password holds it. */
  pendingSignIn: { base: "gatehouse-pending-sign-in", path: "/" },
  /** "Remember this browser": the grant's secret, worth nothing without the device cookie (docs/decisions/0033). */
  remember: { base: "gatehouse-remember", path: "/" },
  /** The visitor's language choice. */
  locale: { base: "gatehouse-locale", path: "/" },
  /** The address typed into "Forgot password?" without JavaScript, for that page only (lib/http/carried-email.ts). */
  forgotEmail: { base: "gatehouse-forgot-email", path: "/forgot-password" },
} as const;

export type GatehouseCookie = keyof typeof COOKIES;

type CookieSettings = { http: Pick<AppConfig["http"], "publicUrl"> };

/** The one rule: the app's public URL is https, so every cookie is Secure and prefixed. */
export function secureCookies(config: CookieSettings): boolean {
  return appOrigin(config.http.publicUrl).startsWith("https://");
}

export function cookieName(config: CookieSettings, cookie: GatehouseCookie): string {
  const { base, path } = COOKIES[cookie];
  if (!secureCookies(config)) return base;
  return `${path === "/" ? "__Host-" : "__Secure-"}${base}`;
}

/** A request's value of `cookie` (a route's `request.cookies`, or a page's `cookies()`). */
export function cookieOf(
  jar: { get(name: string): { value: string } | undefined },
  config: CookieSettings,
  cookie: GatehouseCookie,
): string | undefined {
  return jar.get(cookieName(config, cookie))?.value;
}

/** How long a cookie lives: seconds from now, or (the session, as next-auth writes it) an instant. */
export type CookieLife = { maxAgeSeconds: number } | { expiresAtMs: number };

/** The `Set-Cookie` value for `cookie`; an empty value with a zero life removes it. */
export function setCookieValue(config: CookieSettings, cookie: GatehouseCookie, value: string, life: CookieLife): string {
  return [
    `${cookieName(config, cookie)}=${value}`,
    `Path=${COOKIES[cookie].path}`,
    "expiresAtMs" in life
      ? `Expires=${new Date(life.expiresAtMs).toUTCString()}${life.expiresAtMs <= 0 ? "; Max-Age=0" : ""}`
      : `Max-Age=${Math.max(0, Math.floor(life.maxAgeSeconds))}`,
    "HttpOnly",
    "SameSite=Lax",
    ...(secureCookies(config) ? ["Secure"] : []),
  ].join("; ");
}

/** Adds `cookie` to a response's headers. */
export function setCookie(response: Response, config: CookieSettings, cookie: GatehouseCookie, value: string, life: CookieLife): Response {
  response.headers.append("Set-Cookie", setCookieValue(config, cookie, value, life));
  return response;
}

/** A request's cookies as `{ name: value }` (a route's `request.cookies`, or a page's `cookies()`). */
export function cookieJar(cookies: { getAll(): { name: string; value: string }[] }): Record<string, string> {
  return Object.fromEntries(cookies.getAll().map((cookie) => [cookie.name, cookie.value]));
}

const untilMs = (expiresAtMs: number, nowMs: number): CookieLife => ({ maxAgeSeconds: (expiresAtMs - nowMs) / 1000 });

export function deviceTokenOf(request: NextRequest, config: CookieSettings): string | undefined {
  return cookieOf(request.cookies, config, "device");
}

/**
 * The device token a raw Cookie header carries, for the door in front of Next.js: parsed by the
 * very NextRequest cookie parser the routes use, so both read the same value of a doubled cookie.
 */
export function deviceTokenOfHeader(cookieHeader: string | null, config: CookieSettings): string | undefined {
  // Most waiting requests carry no device cookie: they cost no parse.
  if (!cookieHeader?.includes(`${cookieName(config, "device")}=`)) return undefined;
  return deviceTokenOf(new NextRequest("http://door.invalid/", { headers: { cookie: cookieHeader } }), config);
}

export function setDeviceCookie(response: Response, config: CookieSettings, token: string, expiresAtMs: number, nowMs: number): Response {
  return setCookie(response, config, "device", token, untilMs(expiresAtMs, nowMs));
}

/** The pending sign-in this browser holds: only the browser that passed the password has it. */
export function pendingSignInOf(request: NextRequest, config: CookieSettings): string | undefined {
  return cookieOf(request.cookies, config, "pendingSignIn");
}

export function setPendingSignInCookie(
  response: Response,
  config: CookieSettings,
  token: string,
  expiresAtMs: number,
  nowMs: number,
): Response {
  return setCookie(response, config, "pendingSignIn", token, untilMs(expiresAtMs, nowMs));
}

/** Spent, expired or out of tries: the browser forgets it. */
export function clearPendingSignInCookie(response: Response, config: CookieSettings): Response {
  return setCookie(response, config, "pendingSignIn", "", { maxAgeSeconds: 0 });
}

/** "Remember this browser": the grant's secret, which only the browser that passed the second step holds. */
export function rememberSecretOf(request: NextRequest, config: CookieSettings): string | undefined {
  return cookieOf(request.cookies, config, "remember");
}

export function setRememberCookie(
  response: Response,
  config: CookieSettings,
  secret: string,
  expiresAtMs: number,
  nowMs: number,
): Response {
  return setCookie(response, config, "remember", secret, untilMs(expiresAtMs, nowMs));
}

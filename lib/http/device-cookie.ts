import { NextRequest } from "next/server";
import type { AppConfig } from "@/lib/config/env";

type CookieSettings = Pick<AppConfig, "nodeEnv">;

/**
 * Gatehouse's own cookies: the known device (OWASP device cookie) and the pending sign-in that
 * waits for its second step. In production each is `__Host-` prefixed, so the browser insists on
 * Secure, Path=/ and no Domain: a sibling subdomain cannot plant or overwrite one. HttpOnly (no
 * script reads it) and SameSite=Lax. The settings are the instance's (its parsed configuration),
 * never the process's environment.
 */
type OwnCookie = "gatehouse-device" | "gatehouse-pending-sign-in" | "gatehouse-remember";

function secure(config: CookieSettings): boolean {
  return config.nodeEnv === "production";
}

function nameOf(config: CookieSettings, cookie: OwnCookie): string {
  return secure(config) ? `__Host-${cookie}` : cookie;
}

function cookieOf(request: NextRequest, config: CookieSettings, cookie: OwnCookie): string | undefined {
  return request.cookies.get(nameOf(config, cookie))?.value;
}

function setCookie(response: Response, config: CookieSettings, cookie: OwnCookie, value: string, maxAgeSeconds: number): Response {
  const attributes = [
    `${nameOf(config, cookie)}=${value}`,
    "Path=/",
    `Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}`,
    "HttpOnly",
    "SameSite=Lax",
    ...(secure(config) ? ["Secure"] : []),
  ];
  response.headers.append("Set-Cookie", attributes.join("; "));
  return response;
}

export function deviceTokenOf(request: NextRequest, config: CookieSettings): string | undefined {
  return cookieOf(request, config, "gatehouse-device");
}

/**
 * The device token a raw Cookie header carries, for the door in front of Next.js: parsed by the
 * very NextRequest cookie parser the routes use, so both read the same value of a doubled cookie.
 */
export function deviceTokenOfHeader(cookieHeader: string | null, config: CookieSettings): string | undefined {
  // Most waiting requests carry no device cookie: they cost no parse.
  if (!cookieHeader?.includes(`${nameOf(config, "gatehouse-device")}=`)) return undefined;
  return deviceTokenOf(new NextRequest("http://door.invalid/", { headers: { cookie: cookieHeader } }), config);
}

export function setDeviceCookie(response: Response, config: CookieSettings, token: string, expiresAtMs: number, nowMs: number): Response {
  return setCookie(response, config, "gatehouse-device", token, (expiresAtMs - nowMs) / 1000);
}

/** The pending sign-in this browser holds: only the browser that passed the password has it. */
export function pendingSignInOf(request: NextRequest, config: CookieSettings): string | undefined {
  return cookieOf(request, config, "gatehouse-pending-sign-in");
}

export function setPendingSignInCookie(
  response: Response,
  config: CookieSettings,
  token: string,
  expiresAtMs: number,
  nowMs: number,
): Response {
  return setCookie(response, config, "gatehouse-pending-sign-in", token, (expiresAtMs - nowMs) / 1000);
}

/** Spent, expired or out of tries: the browser forgets it. */
export function clearPendingSignInCookie(response: Response, config: CookieSettings): Response {
  return setCookie(response, config, "gatehouse-pending-sign-in", "", 0);
}

/**
 * "Remember this browser": the grant's secret, which only the browser that passed the second step
 * holds. Worth nothing without the device cookie of the row that stores its digest (docs/decisions/0033).
 */
export function rememberSecretOf(request: NextRequest, config: CookieSettings): string | undefined {
  return cookieOf(request, config, "gatehouse-remember");
}

export function setRememberCookie(response: Response, config: CookieSettings, secret: string, untilMs: number, nowMs: number): Response {
  return setCookie(response, config, "gatehouse-remember", secret, (untilMs - nowMs) / 1000);
}

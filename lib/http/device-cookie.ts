import type { NextRequest } from "next/server";
import type { AppConfig } from "@/lib/config/env";

type CookieSettings = Pick<AppConfig, "NODE_ENV">;

/**
 * The known-device cookie. In production it is `__Host-` prefixed, so the browser insists on
 * Secure, Path=/ and no Domain: a sibling subdomain cannot plant or overwrite it. HttpOnly (no
 * script reads it) and SameSite=Lax. The settings are the instance's (its parsed configuration),
 * never the process's environment.
 */
function secure(config: CookieSettings): boolean {
  return config.NODE_ENV === "production";
}

function deviceCookieName(config: CookieSettings): string {
  return secure(config) ? "__Host-gatehouse-device" : "gatehouse-device";
}

export function deviceTokenOf(request: NextRequest, config: CookieSettings): string | undefined {
  return request.cookies.get(deviceCookieName(config))?.value;
}

export function setDeviceCookie(response: Response, config: CookieSettings, token: string, expiresAtMs: number, nowMs: number): Response {
  const maxAgeSeconds = Math.max(0, Math.floor((expiresAtMs - nowMs) / 1000));
  const attributes = [
    `${deviceCookieName(config)}=${token}`,
    "Path=/",
    `Max-Age=${maxAgeSeconds}`,
    "HttpOnly",
    "SameSite=Lax",
    ...(secure(config) ? ["Secure"] : []),
  ];
  response.headers.append("Set-Cookie", attributes.join("; "));
  return response;
}

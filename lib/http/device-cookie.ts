import type { NextRequest } from "next/server";
import { getConfig } from "@/lib/config/env";

/**
 * The known-device cookie. In production it is `__Host-` prefixed, so the browser insists on
 * Secure, Path=/ and no Domain: a sibling subdomain cannot plant or overwrite it. HttpOnly (no
 * script reads it) and SameSite=Lax.
 */
function secure(): boolean {
  return getConfig().NODE_ENV === "production";
}

export function deviceCookieName(): string {
  return secure() ? "__Host-gatehouse-device" : "gatehouse-device";
}

export function deviceTokenOf(request: NextRequest): string | undefined {
  return request.cookies.get(deviceCookieName())?.value;
}

export function setDeviceCookie(response: Response, token: string, expiresAtMs: number, nowMs: number): Response {
  const maxAgeSeconds = Math.max(0, Math.floor((expiresAtMs - nowMs) / 1000));
  const attributes = [
    `${deviceCookieName()}=${token}`,
    "Path=/",
    `Max-Age=${maxAgeSeconds}`,
    "HttpOnly",
    "SameSite=Lax",
    ...(secure() ? ["Secure"] : []),
  ];
  response.headers.append("Set-Cookie", attributes.join("; "));
  return response;
}

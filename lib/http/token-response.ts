import type { AppConfig } from "@/lib/config/env";
import { json } from "./responses";

/**
 * The OAuth-style 200 body both token endpoints answer with (never cached). `extra`: fields only
 * a password sign-in returns (the client's new `device_token`).
 */
export function tokenPair(
  accessToken: string,
  refreshToken: string,
  config: { tokens: Pick<AppConfig["tokens"], "accessTtlSeconds" | "refreshTtlSeconds"> },
  extra: Record<string, string> = {},
) {
  return json(200, {
    access_token: accessToken,
    token_type: "Bearer",
    expires_in: config.tokens.accessTtlSeconds,
    refresh_token: refreshToken,
    refresh_expires_in: config.tokens.refreshTtlSeconds,
    ...extra,
  });
}

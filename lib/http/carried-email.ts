import type { AppConfig } from "@/lib/config/env";
import { cookieOf, setCookieValue } from "./cookies";

/**
 * The address typed into "Forgot password?" when the form went off without JavaScript (the
 * no-script route cannot ask for a link: there is no proof of work). It comes back in a cookie
 * scoped to that page (the cookie room's `forgotEmail`), short-lived, so the page shows the field
 * filled again: never in a URL, where history, logs and Referer headers would keep it.
 */
const MAX_AGE_SECONDS = 300;
/** An address is at most 254 characters; anything longer is not kept. */
const MAX_LENGTH = 254;

type CookieSettings = { http: Pick<AppConfig["http"], "publicUrl"> };

/** The Set-Cookie value that keeps `email` for the forgot-password page, or null when there is nothing to keep. */
export function carriedEmailCookie(email: string | undefined, config: CookieSettings): string | null {
  const value = email?.trim() ?? "";
  if (!value || value.length > MAX_LENGTH) return null;
  return setCookieValue(config, "forgotEmail", encodeURIComponent(value), { maxAgeSeconds: MAX_AGE_SECONDS });
}

/** The kept address from the forgot-password page's cookies, or "". */
export function carriedEmailOf(jar: { get(name: string): { value: string } | undefined }, config: CookieSettings): string {
  const raw = cookieOf(jar, config, "forgotEmail");
  if (!raw) return "";
  try {
    const value = decodeURIComponent(raw);
    return value.length <= MAX_LENGTH ? value : "";
  } catch {
    return "";
  }
}

/**
 * The address typed into "Forgot password?" when the form went off without JavaScript (the
 * no-script route cannot ask for a link: there is no proof of work). It comes back in a cookie
 * scoped to that page, short-lived, so the page shows the field filled again: never in a URL,
 * where history, logs and Referer headers would keep it.
 */
const NAME = "gatehouse-forgot-email";
const PATH = "/forgot-password";
const MAX_AGE_SECONDS = 300;
/** An address is at most 254 characters; anything longer is not kept. */
const MAX_LENGTH = 254;

/** The cookie's name: `__Secure-` under an https public URL (`__Host-` needs Path=/). */
export function carriedEmailCookieName(secure: boolean): string {
  return `${secure ? "__Secure-" : ""}${NAME}`;
}

/** The Set-Cookie value that keeps `email` for the forgot-password page, or null when there is nothing to keep. */
export function carriedEmailCookie(email: string | undefined, secure: boolean): string | null {
  const value = email?.trim() ?? "";
  if (!value || value.length > MAX_LENGTH) return null;
  return [
    `${carriedEmailCookieName(secure)}=${encodeURIComponent(value)}`,
    `Path=${PATH}`,
    `Max-Age=${MAX_AGE_SECONDS}`,
    "HttpOnly",
    "SameSite=Lax",
    ...(secure ? ["Secure"] : []),
  ].join("; ");
}

/** The kept address from the cookie's raw value, or "". */
export function carriedEmailOf(raw: string | undefined): string {
  if (!raw) return "";
  try {
    const value = decodeURIComponent(raw);
    return value.length <= MAX_LENGTH ? value : "";
  } catch {
    return "";
  }
}

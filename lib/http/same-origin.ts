/**
 * Whether a cookie-authenticated state change comes from the app's own pages. A browser says so
 * with `Sec-Fetch-Site: same-origin` (Fetch Metadata); one that sends no Sec-Fetch-Site must send
 * an Origin equal to the app's. `same-site` is refused: a sibling subdomain shares SameSite=Lax
 * cookies, which is exactly the attack left open. OWASP CSRF Prevention Cheat Sheet.
 */
export function isSameOriginRequest(headers: Pick<Headers, "get">, appOrigin: string): boolean {
  const site = headers.get("sec-fetch-site");
  if (site !== null) return site === "same-origin";
  const origin = headers.get("origin");
  return origin !== null && origin === appOrigin;
}

/** The origin of NEXTAUTH_URL, or next-auth's own fallback when it is unset (development, tests). */
export function appOrigin(nextAuthUrl: string | undefined): string {
  // Asked on every write (the CSRF rule, the fast path's cross-site memory) with the same setting:
  // the last answer is kept, so a flood pays for a comparison, not a URL parse.
  if (lastOrigin !== null && lastOrigin.url === nextAuthUrl) return lastOrigin.origin;
  let origin: string;
  try {
    origin = new URL(nextAuthUrl ?? "http://localhost:3000").origin;
  } catch {
    origin = "http://localhost:3000";
  }
  lastOrigin = { url: nextAuthUrl, origin };
  return origin;
}

let lastOrigin: { url: string | undefined; origin: string } | null = null;

/**
 * Headers every response carries. proxy.ts adds them to documents along with the per-request
 * CSP; next.config.ts sets them on API responses at routing time (static, no per-request work),
 * and the refusal fast path in server.mjs sends the API set too.
 */
export function baseSecurityHeaders(production: boolean): Record<string, string> {
  return {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "strict-origin-when-cross-origin",
    "X-Frame-Options": "DENY",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
    // HTTPS only in production; over plain HTTP (development) browsers ignore it anyway.
    ...(production ? { "Strict-Transport-Security": "max-age=63072000; includeSubDomains" } : {}),
  };
}

export function apiSecurityHeaders(production: boolean): Record<string, string> {
  // JSON is not a document: nothing in it may load, run or be framed.
  return { "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'", ...baseSecurityHeaders(production) };
}

import { apiSecurityHeaders } from "@/lib/http/security-headers";
import { jsonError } from "@/lib/http/responses";
import type { Logo } from "./logo";

/** No script, no fetch, no form, no plugin: styles inside the SVG only, and a sandbox should it be opened as a document. */
export const SVG_LOGO_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; sandbox";

/**
 * The answer for GET /api/brand/logo/<hash>. The URL carries the content's hash, so the bytes at
 * it never change and browsers may keep them for a year without asking; another hash (a logo
 * since replaced, or none at all) is a 404, never the current bytes under a stale URL. next.config.ts
 * leaves this path's headers to it: the API's set, with the SVG's own CSP.
 */
export function logoResponse(logo: Logo | null, hash: string, ifNoneMatch: string | null, production: boolean): Response {
  const security = apiSecurityHeaders(production);
  if (!logo || hash !== logo.hash) return jsonError(404, "not_found", "No such logo.", {}, security);
  const headers: Record<string, string> = {
    ...security,
    "Content-Type": logo.contentType,
    "Cache-Control": "public, max-age=31536000, immutable",
    ETag: logo.etag,
    "X-Content-Type-Options": "nosniff",
    ...(logo.contentType === "image/svg+xml" ? { "Content-Security-Policy": SVG_LOGO_CSP } : {}),
  };
  if (ifNoneMatch === logo.etag) return new Response(null, { status: 304, headers });
  return new Response(new Uint8Array(logo.bytes), { status: 200, headers: { ...headers, "Content-Length": String(logo.bytes.length) } });
}

import { NextResponse, type NextRequest } from "next/server";
import { getConfig } from "./lib/config/env";
import { baseSecurityHeaders } from "./lib/http/security-headers";
import { PAGE_PATH_HEADER } from "./lib/http/page-paths";

/**
 * Security headers on every page, set per request so the CSP can carry a fresh nonce (Next.js
 * reads it from the request's CSP header and puts it on its own scripts). The policy is
 * enforced unless CSP_MODE=report-only; violations are reported to /api/csp-report either way.
 * API responses get static headers from next.config.ts instead, and /_next/static, /_next/image
 * and favicon.ico skip it (other public files still pass through): the nonce is only worth its
 * cost on a document.
 */
export function proxy(request: NextRequest) {
  const config = getConfig();
  const nonce = btoa(crypto.randomUUID());
  const development = config.nodeEnv === "development";
  const csp = [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${development ? " 'unsafe-eval'" : ""}`,
    // The ALTCHA widget injects its own styles and runs its proof of work in blob: workers.
    "style-src 'self' 'unsafe-inline'",
    "worker-src 'self' blob:",
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "report-uri /api/csp-report",
    "report-to csp",
  ].join("; ");

  const requestHeaders = new Headers(request.headers);
  requestHeaders.set("content-security-policy", csp);
  // The page asked for, for the layout (an account with a breached password is sent to one page); set here, so a client cannot choose it.
  requestHeaders.set(PAGE_PATH_HEADER, request.nextUrl.pathname);
  const response = NextResponse.next({ request: { headers: requestHeaders } });

  response.headers.set(config.http.cspMode === "enforce" ? "Content-Security-Policy" : "Content-Security-Policy-Report-Only", csp);
  response.headers.set("Reporting-Endpoints", 'csp="/api/csp-report"');
  for (const [name, value] of Object.entries(baseSecurityHeaders(config.nodeEnv === "production"))) response.headers.set(name, value);
  return response;
}

export const config = {
  matcher: [{ source: "/((?!api/|_next/static|_next/image|favicon.ico).*)" }],
};

import type { NextConfig } from "next";
import createNextIntlPlugin from "next-intl/plugin";
import { apiSecurityHeaders } from "./lib/http/security-headers";

const nextConfig: NextConfig = {
  poweredByHeader: false,
  // A self-contained server folder (.next/standalone, with only the node_modules it traced);
  // scripts/package-standalone.sh completes it with server.mjs and the files read at run time.
  output: "standalone",
  // Read from files at start (lib/db/migrate.ts), not imported, so named here rather than left to
  // the tracer's guess; scripts/package-standalone.sh checks that every one arrived.
  // The catalogues too (lib/i18n/catalogues.ts reads messages/<locale>/*.json at start).
  outputFileTracingIncludes: { "/**": ["./prisma/migrations/**/*", "./messages/**/*"] },
  // Native and WASM packages load from node_modules at run time instead of being bundled.
  serverExternalPackages: ["@electric-sql/pglite", "@node-rs/argon2", "pino", "proper-lockfile"],
  experimental: {
    // Next loads every route's code at start by default. Each route's bundle carries its own copy
    // of lib/ (a 1.1 MB chunk, which a few non-Latin-1 characters make a 2.2 MiB two-byte string,
    // compiled on its own), so 26 routes held some 70 MiB of heap before one was asked for. Loaded
    // when first requested instead, an instance pays only for the routes its clients use (RSS after
    // warm-up 304 -> 247 MiB, bench/RESULTS.md part 11); a route's first request waits for its load.
    preloadEntriesOnStart: false,
  },
  // API responses get their security headers here, at routing time: static, so no per-request
  // work (proxy.ts, with its CSP nonce, runs for documents only).
  async headers() {
    // Read at build time, before any runtime configuration (and its secrets) exists: NODE_ENV alone.
    const headers = apiSecurityHeaders(process.env.NODE_ENV === "production");
    // Not the logo: Next would put this CSP over the route's own, and an SVG needs its styles
    // (lib/brand/logo-response.ts sets the same headers with a CSP of its own).
    return [{ source: "/api/:path((?!brand/logo/).*)", headers: Object.entries(headers).map(([key, value]) => ({ key, value })) }];
  },
};

// next-intl for server components: its per-request configuration is i18n/request.ts.
export default createNextIntlPlugin("./i18n/request.ts")(nextConfig);

import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  poweredByHeader: false,
  // Native and WASM packages load from node_modules at run time instead of being bundled.
  serverExternalPackages: ["@electric-sql/pglite", "@node-rs/argon2", "pino", "proper-lockfile"],
};

export default nextConfig;

import path from "node:path";
import { defineConfig } from "prisma/config";
import { createCliAdapter } from "./lib/db/adapters";
import { resolveDatabaseTarget } from "./lib/db/target";

// `engine: "js"` runs migrations on Prisma's WASM schema engine through the same driver adapter
// the app uses. Together with the generator's `engineType = "client"`, the CLI then needs no
// engine binary at all, so its start-up check asks for nothing to download.
export default defineConfig({
  experimental: { adapter: true },
  schema: path.join("prisma", "schema.prisma"),
  migrations: { path: path.join("prisma", "migrations") },
  engine: "js",
  adapter: () => createCliAdapter(resolveDatabaseTarget(process.env.DATABASE_URL)),
});

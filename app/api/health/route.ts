import { getDatabase } from "@/lib/db/client";
import { limited } from "@/lib/http/limited";
import { json } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

export const GET = limited("/api/health", async (_request, { gate }) => {
  let database: "up" | "down" = "down";
  try {
    const { prisma } = await getDatabase();
    await prisma.$queryRaw`SELECT 1`;
    database = "up";
  } catch {
    database = "down";
  }
  // `ok` follows the database only: with the limiter store down each policy's outage rule
  // applies and the app still serves, so a load balancer must not pull every instance.
  const ok = database === "up";
  return json(ok ? 200 : 503, { ok, database, rateLimitStore: gate.storeHealth() });
});

import { gatehouse } from "@/lib/auth/gatehouse";
import { getDatabase } from "@/lib/db/client";
import { json } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

export async function GET() {
  let database: "up" | "down" = "down";
  try {
    const { prisma } = await getDatabase();
    await prisma.$queryRaw`SELECT 1`;
    database = "up";
  } catch {
    database = "down";
  }
  const ok = database === "up";
  const rateLimitStore = { kind: (await gatehouse()).limiter.storeKind, state: "up" };
  return json(ok ? 200 : 503, { ok, database, rateLimitStore });
}

import type { Gatehouse } from "@/lib/auth/gatehouse";

export type HealthReport = { database: "up" | "down"; rateLimitStore: ReturnType<Gatehouse["storeHealth"]> };

/** What liveness and readiness both report: the database answers a `SELECT 1`, and the limiter store's state. */
export async function healthReport(gate: Gatehouse): Promise<HealthReport> {
  let database: HealthReport["database"] = "down";
  try {
    await gate.prisma.$queryRaw`SELECT 1`;
    database = "up";
  } catch {
    database = "down";
  }
  return { database, rateLimitStore: gate.storeHealth() };
}

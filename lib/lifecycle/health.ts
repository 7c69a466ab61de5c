import type { Gatehouse } from "@/lib/app";
import type { DataReport } from "@/lib/db/data-health";
import type { DiskReading } from "@/lib/db/disk-guard";

export type HealthReport = {
  database: "up" | "down";
  /** Whether the database took a write just now (readiness only; liveness does not write). */
  writable?: boolean;
  /** The embedded database's folder: free space against DISK_MIN_FREE_MB (PGlite only). */
  disk?: DiskReading & { ok: boolean };
  rateLimitStore: ReturnType<Gatehouse["storeHealth"]> & { failClosedPolicies: boolean };
  /** Readiness only: whether requests are failing on damaged stored data. */
  data?: DataReport;
};

function storeReport(gate: Gatehouse): HealthReport["rateLimitStore"] {
  const failClosedPolicies = Object.values(gate.config.rateLimit.policies).some((policy) => policy.failMode === "closed");
  return { ...gate.storeHealth(), failClosedPolicies };
}

/** What liveness and readiness both report: the database answers a `SELECT 1`, and the limiter store's state. */
export async function healthReport(gate: Gatehouse): Promise<HealthReport> {
  let database: HealthReport["database"] = "down";
  try {
    await gate.prisma.$queryRaw`SELECT 1`;
    database = "up";
  } catch {
    database = "down";
  }
  return { database, rateLimitStore: storeReport(gate) };
}

/**
 * Readiness's report: liveness's, plus whether a write commits (a database that reads but cannot
 * write refuses every sign-in, since each one records its attempt), and, on PGlite, free space in
 * its folder: a full disk stops writes before any query says so.
 */
export async function readinessReport(gate: Gatehouse): Promise<HealthReport & { ready: boolean }> {
  const report: HealthReport = await healthReport(gate);
  if (report.database === "up") {
    try {
      const now = new Date(gate.clock());
      await gate.prisma.healthProbe.upsert({ where: { id: 1 }, create: { id: 1, checkedAt: now }, update: { checkedAt: now } });
      report.writable = true;
    } catch {
      report.writable = false;
    }
  }
  if (gate.disk) {
    // The same reading, and threshold, that refuses writes (lib/db/disk-guard.ts).
    const { freeBytes, minFreeBytes, warnBelowBytes, state } = await gate.disk.sample();
    report.disk = { freeBytes, minFreeBytes, warnBelowBytes, state, ok: state !== "full" };
  }
  // Damaged data fails requests whatever the probes above say, and nothing here mends it.
  report.data = gate.dataHealth.report();
  // A fail-closed policy refuses every request it guards while its store is down: not ready.
  const store = report.rateLimitStore;
  const storeOk = !(store.failClosedPolicies && store.state === "down");
  const ready = report.database === "up" && report.writable === true && (report.disk?.ok ?? true) && report.data.ok && storeOk;
  return { ...report, ready };
}

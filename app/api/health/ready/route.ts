import { limited } from "@/lib/auth/limited";
import { json } from "@/lib/http/responses";
import { readinessReport } from "@/lib/lifecycle/health";
import { isDraining } from "@/lib/lifecycle/lifecycle";

export const dynamic = "force-dynamic";

/**
 * Readiness: whether a load balancer should send this instance new requests. 503 from the first
 * SIGTERM on (the server is finishing what it has), while the database does not answer or does
 * not take a write, while the embedded database's disk is below DISK_MIN_FREE_MB, while a
 * fail-closed policy's shared store is down (every sign-in would be refused), and while requests
 * fail on damaged data (lib/db/data-health.ts).
 */
export const GET = limited("/api/health/ready", async (_request, { gate }) => {
  const draining = isDraining();
  const { ready, ...report } = await readinessReport(gate);
  const ok = !draining && ready;
  return json(ok ? 200 : 503, { ok, draining, ...report });
});

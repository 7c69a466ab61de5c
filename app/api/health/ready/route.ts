import { limited } from "@/lib/http/limited";
import { json } from "@/lib/http/responses";
import { healthReport } from "@/lib/lifecycle/health";
import { isDraining } from "@/lib/lifecycle/lifecycle";

export const dynamic = "force-dynamic";

/**
 * Readiness: whether a load balancer should send this instance new requests. 503 from the first
 * SIGTERM on (the server is finishing what it has), and while the database does not answer.
 */
export const GET = limited("/api/health/ready", async (_request, { gate }) => {
  const draining = isDraining();
  const report = await healthReport(gate);
  const ok = !draining && report.database === "up";
  return json(ok ? 200 : 503, { ok, draining, ...report });
});

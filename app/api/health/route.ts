import { limited } from "@/lib/auth/limited";
import { json } from "@/lib/http/responses";
import { healthReport } from "@/lib/lifecycle/health";

export const dynamic = "force-dynamic";

/** Liveness: the process serves and its database answers. It stays 200 while the server drains. */
export const GET = limited("/api/health", async (_request, { gate }) => {
  const report = await healthReport(gate);
  // `ok` follows the database only: with the limiter store down each policy's outage rule
  // applies and the app still serves, so a load balancer must not pull every instance.
  const ok = report.database === "up";
  return json(ok ? 200 : 503, { ok, ...report });
});

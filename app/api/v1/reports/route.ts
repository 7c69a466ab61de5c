import { apiCaller } from "@/lib/auth/api-auth";
import { limited } from "@/lib/auth/limited";
import { json } from "@/lib/http/responses";
import { buildReport } from "@/lib/events/reports";

export const dynamic = "force-dynamic";

/** Builds the caller's sign-in history report: the expensive endpoint, with its own tight bucket. */
export const POST = limited("/api/v1/reports", async (request, limits) => {
  const { gate } = limits;
  const auth = await apiCaller(request, gate, { changesState: true });
  if (!auth.ok) return auth.response;
  const { userId } = auth.caller;

  const refused = await limits.limit("user", userId);
  if (refused) return refused;

  const report = await buildReport(gate.prisma, gate.events, userId, gate.clock(), gate.config.retention.reportsKeepPerUser);
  return json(201, { id: report.id, createdAt: report.createdAt.toISOString(), href: `/api/v1/reports/${report.id}` });
});

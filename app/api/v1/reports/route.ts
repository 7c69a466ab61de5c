import { apiCaller } from "@/lib/auth/api-auth";
import { limited } from "@/lib/http/limited";
import { json } from "@/lib/http/responses";
import { capReports } from "@/lib/retention/retention";

export const dynamic = "force-dynamic";

/** Builds the caller's sign-in history report: the expensive endpoint, with its own tight bucket. */
export const POST = limited("/api/v1/reports", async (request, limits) => {
  const { gate } = limits;
  const auth = await apiCaller(request, gate, { changesState: true });
  if (!auth.ok) return auth.response;
  const { userId } = auth.caller;

  const refused = await limits.limit("user", userId);
  if (refused) return refused;

  const events = await gate.events.recent(userId, 1_000);
  const count = (kind: string) => events.filter((event) => event.kind === kind).length;
  const content = {
    generatedAt: new Date(gate.clock()).toISOString(),
    signIns: count("sign_in_succeeded"),
    failedSignIns: count("sign_in_failed"),
    lockouts: count("locked"),
    apiSessions: count("refresh_family_created"),
    events: events.map((event) => ({ kind: event.kind, address: event.address, at: event.at.toISOString() })),
  };
  const db = gate.prisma;
  const report = await db.report.create({ data: { userId, content }, select: { id: true, createdAt: true } });
  // The per-user bound on stored reports: the newest REPORTS_KEEP_PER_USER stay.
  await capReports(db, userId, gate.config.REPORTS_KEEP_PER_USER);
  return json(201, { id: report.id, createdAt: report.createdAt.toISOString(), href: `/api/v1/reports/${report.id}` });
});

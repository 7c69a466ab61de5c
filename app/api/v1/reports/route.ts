import type { NextRequest } from "next/server";
import { apiCaller } from "@/lib/auth/api-auth";
import { gatehouse } from "@/lib/auth/gatehouse";
import { prisma } from "@/lib/db/client";
import { apiRateLimited } from "@/lib/http/refusals";
import { json } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

/** Builds the caller's sign-in history report: the expensive endpoint, with its own tight bucket. */
export async function POST(request: NextRequest) {
  const gate = await gatehouse();
  const auth = await apiCaller(request, gate);
  if (!auth.ok) return auth.response;
  const { userId } = auth.caller;

  const limit = await gate.limiter.consume("apiReports", [userId]);
  if (!limit.allowed) return apiRateLimited(limit);

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
  const report = await (await prisma()).report.create({ data: { userId, content }, select: { id: true, createdAt: true } });
  return json(201, { id: report.id, createdAt: report.createdAt.toISOString(), href: `/api/v1/reports/${report.id}` });
}

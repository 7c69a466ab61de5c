import type { NextRequest } from "next/server";
import { apiCaller } from "@/lib/auth/api-auth";
import type { Gatehouse } from "@/lib/app";
import { limited } from "@/lib/auth/limited";
import { accept, refuse, type OrRefused } from "@/lib/http/or-refused";
import { json, jsonError } from "@/lib/http/responses";
import { findReport } from "@/lib/events/reports";
import { spendDownloadToken } from "@/lib/tokens/download-tokens";

export const dynamic = "force-dynamic";

const NOT_FOUND = "No such report.";

/**
 * The caller: a Bearer token or session, or else a download token from POST
 * /api/v1/download-tokens, spent here on the report it names. A used, expired, unknown or
 * another report's token gets the 404 an unknown report gets: a link tells nothing about others.
 */
async function downloader(request: NextRequest, gate: Gatehouse, reportId: string): Promise<OrRefused<{ userId: string }>> {
  const downloadToken = request.nextUrl.searchParams.get("token");
  if (downloadToken && request.headers.get("authorization") === null) {
    const owner = await spendDownloadToken(gate.prisma, downloadToken, reportId, gate.clock());
    if (owner) return accept({ userId: owner });
    return refuse(jsonError(404, "not_found", NOT_FOUND));
  }
  const auth = await apiCaller(request, gate);
  return auth.ok ? accept({ userId: auth.caller.userId }) : auth;
}

/**
 * Downloads one of the caller's reports. Its own bucket per client address: downloads must
 * neither spend the report-build quota nor let anyone probe ids freely.
 */
export const GET = limited("/api/v1/reports/[id]", async (request, { gate }, context: { params: Promise<{ id: string }> }) => {
  const { id } = await context.params;
  const caller = await downloader(request, gate, id);
  if (!caller.ok) return caller.response;

  // Another user's report and a report that does not exist get the same answer.
  const report = await findReport(gate.prisma, caller.userId, id);
  if (!report) return jsonError(404, "not_found", NOT_FOUND);
  return json(200, { id: report.id, createdAt: report.createdAt.toISOString(), content: report.content });
});

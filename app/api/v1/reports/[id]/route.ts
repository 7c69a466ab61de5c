import { createHash } from "node:crypto";
import type { NextRequest } from "next/server";
import { apiCaller } from "@/lib/auth/api-auth";
import type { Gatehouse } from "@/lib/auth/gatehouse";
import { limited } from "@/lib/http/limited";
import { json, jsonError } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The caller: a Bearer token or session, or else a download token from POST /api/v1/download-tokens. */
async function downloader(request: NextRequest, gate: Gatehouse) {
  const downloadToken = request.nextUrl.searchParams.get("token");
  if (downloadToken && request.headers.get("authorization") === null) {
    const found = await gate.prisma.downloadToken.findUnique({
      where: { tokenHash: createHash("sha256").update(downloadToken).digest("hex") },
      select: { userId: true, expiresAt: true },
    });
    if (found && found.expiresAt.getTime() > gate.clock()) return { ok: true as const, userId: found.userId };
    return { ok: false as const, response: jsonError(401, "invalid_token", "The download token is not valid or has expired.") };
  }
  const auth = await apiCaller(request, gate);
  return auth.ok ? { ok: true as const, userId: auth.caller.userId } : auth;
}

/**
 * Downloads one of the caller's reports. Its own bucket per client address: downloads must
 * neither spend the report-build quota nor let anyone probe ids freely.
 */
export const GET = limited("/api/v1/reports/[id]", async (request, { gate }, context: { params: Promise<{ id: string }> }) => {
  const caller = await downloader(request, gate);
  if (!caller.ok) return caller.response;

  const { id } = await context.params;
  // Another user's report and a report that does not exist get the same answer.
  const notFound = () => jsonError(404, "not_found", "No such report.");
  if (!UUID.test(id)) return notFound();
  const report = await gate.prisma.report.findFirst({ where: { id, userId: caller.userId }, select: { id: true, createdAt: true, content: true } });
  if (!report) return notFound();
  return json(200, { id: report.id, createdAt: report.createdAt.toISOString(), content: report.content });
});

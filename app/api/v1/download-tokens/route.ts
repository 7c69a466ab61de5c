import { z } from "zod";
import { apiCaller } from "@/lib/auth/api-auth";
import { fieldErrors } from "@/lib/auth/credentials";
import { readJson } from "@/lib/http/body";
import { limited } from "@/lib/auth/limited";
import { json, jsonError } from "@/lib/http/responses";
import { issueDownloadToken } from "@/lib/tokens/download-tokens";

export const dynamic = "force-dynamic";

const downloadTokenSchema = z.object({
  report_id: z.string({ error: "report_id is required." }).min(1, "report_id is required.").max(64, "report_id is too long."),
});

/**
 * A short-lived, single-use token for one report's download link (GET /api/v1/reports/{id}?token=…).
 * A quota keyed by the user id, not the address: it is a high-value authenticated action.
 */
export const POST = limited("/api/v1/download-tokens", async (request, limits) => {
  const { gate } = limits;
  const auth = await apiCaller(request, gate, { changesState: true });
  if (!auth.ok) return auth.response;

  const refused = await limits.limit("user", auth.caller.userId);
  if (refused) return refused;

  const body = await readJson(request, gate.config.http.maxBodyBytes);
  if (!body.ok) return body.response;
  const input = downloadTokenSchema.safeParse(body.value);
  if (!input.success) return jsonError(400, "invalid_input", "Name the report as report_id.", { fields: fieldErrors(input.error) });

  const issued = await issueDownloadToken(gate.prisma, auth.caller.userId, input.data.report_id, gate.clock());
  // Another user's report and one that does not exist get the same answer.
  if (!issued) return jsonError(404, "not_found", "No such report.");
  return json(201, { token: issued.token, expiresAt: issued.expiresAt.toISOString() });
});

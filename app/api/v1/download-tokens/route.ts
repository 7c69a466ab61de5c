import { apiCaller } from "@/lib/auth/api-auth";
import { limited } from "@/lib/http/limited";
import { json } from "@/lib/http/responses";
import { issueDownloadToken } from "@/lib/tokens/download-tokens";

export const dynamic = "force-dynamic";

/**
 * A short-lived token for a download link (GET /api/v1/reports/{id}?token=…). A quota keyed by
 * the user id, not the address: it is a high-value authenticated action.
 */
export const POST = limited("/api/v1/download-tokens", async (request, limits) => {
  const { gate } = limits;
  const auth = await apiCaller(request, gate, { changesState: true });
  if (!auth.ok) return auth.response;

  const refused = await limits.limit("user", auth.caller.userId);
  if (refused) return refused;

  const { token, expiresAt } = await issueDownloadToken(gate.prisma, auth.caller.userId, gate.clock());
  return json(201, { token, expiresAt: expiresAt.toISOString() });
});

import { createHash, randomBytes } from "node:crypto";
import { apiCaller } from "@/lib/auth/api-auth";
import { limited } from "@/lib/http/limited";
import { json } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

const DOWNLOAD_TOKEN_TTL_MS = 10 * 60_000;

/**
 * A short-lived token for a download link (GET /api/v1/reports/{id}?token=…), stored as a
 * digest. A quota keyed by the user id, not the address: it is a high-value authenticated action.
 */
export const POST = limited("/api/v1/download-tokens", async (request, limits) => {
  const { gate } = limits;
  const auth = await apiCaller(request, gate, { changesState: true });
  if (!auth.ok) return auth.response;

  const refused = await limits.limit("user", auth.caller.userId);
  if (refused) return refused;

  const token = randomBytes(32).toString("base64url");
  const expiresAt = new Date(gate.clock() + DOWNLOAD_TOKEN_TTL_MS);
  await gate.prisma.downloadToken.create({
    data: { userId: auth.caller.userId, tokenHash: createHash("sha256").update(token).digest("hex"), expiresAt },
  });
  return json(201, { token, expiresAt: expiresAt.toISOString() });
});

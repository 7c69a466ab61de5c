import { revokeAllFamilies } from "@/lib/tokens/refresh-tokens";
import type { Gatehouse } from "./gatehouse";

export type EndedSessions = { browserSessions: number; apiSessions: number; downloadTokens: number };

/**
 * "Sign out everywhere else": every browser session of the user but `keepSid` (all of them for
 * null), every API session (refresh family), and every report download token (a session could
 * have minted one, and a link outliving the session would outlive its revocation). Access tokens already issued live out their ACCESS_TOKEN_TTL_SECONDS
 * (15 minutes by default): they are stateless by design.
 */
export async function endOtherSessions(gate: Gatehouse, userId: string, keepSid: string | null, nowMs: number): Promise<EndedSessions> {
  const browserSessions = await gate.sessions.revokeAllExcept(userId, keepSid, nowMs);
  const db = gate.prisma;
  const apiSessions = await revokeAllFamilies(db, userId, nowMs);
  const { count: downloadTokens } = await db.downloadToken.deleteMany({ where: { userId } });
  return { browserSessions, apiSessions, downloadTokens };
}

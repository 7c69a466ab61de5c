import { prisma } from "@/lib/db/client";
import { revokeAllFamilies } from "@/lib/tokens/refresh-tokens";
import type { Gatehouse } from "./gatehouse";

export type EndedSessions = { browserSessions: number; apiSessions: number };

/**
 * "Sign out everywhere else": every browser session of the user but `keepSid` (all of them for
 * null), and every API session (refresh family). Access tokens already issued live out their ACCESS_TOKEN_TTL_SECONDS
 * (15 minutes by default): they are stateless by design.
 */
export async function endOtherSessions(gate: Gatehouse, userId: string, keepSid: string | null, nowMs: number): Promise<EndedSessions> {
  const browserSessions = await gate.sessions.revokeAllExcept(userId, keepSid, nowMs);
  const apiSessions = await revokeAllFamilies(await prisma(), userId, nowMs);
  return { browserSessions, apiSessions };
}

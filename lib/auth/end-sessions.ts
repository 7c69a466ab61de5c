import { revokeAllFamilies } from "@/lib/tokens/refresh-tokens";
import type { Gatehouse } from "./gatehouse";

export type EndedSessions = { browserSessions: number; apiSessions: number; downloadTokens: number };

/**
 * Ends every browser session of the user but `keepSid` (all of them for null), every API session
 * (refresh family, and with it every access token it issued: apiCaller checks the family) and
 * every report download token (a session could have minted one, and a link outliving the
 * session would outlive its revocation). The password change and reset call this after the
 * UPDATE that raised the generation; "sign out everywhere" calls signOutEverywhere.
 */
export async function endOtherSessions(gate: Gatehouse, userId: string, keepSid: string | null, nowMs: number): Promise<EndedSessions> {
  const browserSessions = await gate.sessions.revokeAllExcept(userId, keepSid, nowMs);
  const db = gate.prisma;
  const apiSessions = await revokeAllFamilies(db, userId, nowMs);
  const { count: downloadTokens } = await db.downloadToken.deleteMany({ where: { userId } });
  return { browserSessions, apiSessions, downloadTokens };
}

/**
 * "Sign out everywhere else" and the operator's revoke-sessions: the generation is raised first
 * (keeping `keepSid`), so a sign-in whose password check ran before this and whose session or
 * tokens are written after it is dead too; the revocations then end what exists. Emailed links
 * issued before (reset, unlock) die with the generation as well: whoever is being shut out may
 * have asked for one.
 */
export async function signOutEverywhere(gate: Gatehouse, userId: string, keepSid: string | null, nowMs: number): Promise<EndedSessions> {
  await gate.sessions.raiseGeneration(userId, keepSid);
  return endOtherSessions(gate, userId, keepSid, nowMs);
}

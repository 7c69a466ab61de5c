import type { Gatehouse } from "@/lib/app";
import { issueAccessToken } from "@/lib/tokens/access-token";
import { issueRefreshToken } from "@/lib/tokens/refresh-tokens";

/**
 * An access token as the token endpoint makes one, without a sign-in: a new refresh family for
 * the user under their current credential generation, and a token naming both. `secret`: sign
 * with another key (a forgery).
 */
export async function apiTokenFor(
  gate: Gatehouse,
  userId: string,
  options: { nowMs?: number; ttlSeconds?: number; secret?: string } = {},
): Promise<string> {
  const nowMs = options.nowMs ?? Date.now();
  const { credentialGeneration } = await gate.prisma.user.findUniqueOrThrow({
    where: { id: userId },
    select: { credentialGeneration: true },
  });
  const family = await issueRefreshToken(gate.prisma, userId, null, 3_600_000, nowMs, { credentialGeneration });
  const subject = { userId, familyId: family.familyId, credentialGeneration };
  return (await issueAccessToken(subject, options.secret ?? gate.config.tokens.secret, options.ttlSeconds ?? 900, nowMs)).token;
}

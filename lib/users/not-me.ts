import type { PrismaClient } from "@/lib/generated/prisma/client";
import { isWellFormedOpaqueToken, newOpaqueToken, tokenDigest } from "@/lib/tokens/opaque-token";

/** The sign-in a new-device mail is about: its session id, the device it was given, and how long it can live. */
export type NotMe = { sessionId: string; deviceId: string; lifetimeMs: number };

/**
 * The refresh family an app's sign-in opens takes its id from the sign-in's session id (16 random
 * bytes either way, written as a UUID), so "This wasn't me" ends it by the id the mail carries.
 */
export function familyIdOfSession(sessionId: string): string | null {
  const bytes = Buffer.from(sessionId, "base64url");
  if (bytes.length !== 16) return null;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A "This wasn't me" link for one sign-in: single-use, dead once the session could no longer live. */
export async function issueNotMeLink(
  prisma: PrismaClient,
  account: { id: string; credentialGeneration: number },
  notMe: NotMe,
  nowMs: number,
): Promise<string> {
  const token = newOpaqueToken();
  await prisma.emailToken.create({
    data: {
      digest: tokenDigest(token),
      userId: account.id,
      purpose: "not_me",
      credentialGeneration: account.credentialGeneration,
      createdAt: new Date(nowMs),
      expiresAt: new Date(nowMs + notMe.lifetimeMs),
      sessionId: notMe.sessionId,
      deviceId: notMe.deviceId,
    },
  });
  return token;
}

/** What "This wasn't me" ended: whose, and how much. */
export type NotMeEnded = { userId: string; email: string; browserSessions: number; apiSessions: number; devicesForgotten: number };

/**
 * Spends the link and, in the same transaction, ends that one session (its browser session, or the
 * app's token family and every access token it issued, which apiCaller checks against the family),
 * and forgets the device that sign-in was given. Null for every bad link alike (forged, used,
 * expired): nothing about the account is told. A session already ended still spends the link.
 */
export async function endSessionNotMe(
  prisma: PrismaClient,
  token: string,
  usernameKey: (email: string) => string,
  nowMs: number,
): Promise<NotMeEnded | null> {
  if (!isWellFormedOpaqueToken(token)) return null;
  const now = new Date(nowMs);
  return prisma.$transaction(async (tx) => {
    const link = await tx.emailToken.findUnique({ where: { digest: tokenDigest(token) } });
    if (!link || link.purpose !== "not_me" || link.usedAt !== null || link.expiresAt <= now || !link.sessionId) return null;
    const { count } = await tx.emailToken.updateMany({ where: { id: link.id, usedAt: null }, data: { usedAt: now } });
    if (count !== 1) return null;
    const user = await tx.user.findUnique({ where: { id: link.userId }, select: { email: true } });
    if (!user) return null;
    const browserSessions = (
      await tx.browserSession.updateMany({ where: { id: link.sessionId, userId: link.userId, revokedAt: null }, data: { revokedAt: now } })
    ).count;
    const familyId = familyIdOfSession(link.sessionId);
    const apiSessions = familyId
      ? (await tx.refreshToken.updateMany({ where: { familyId, userId: link.userId, revokedAt: null }, data: { revokedAt: now } })).count
      : 0;
    const devicesForgotten = link.deviceId
      ? (await tx.knownDevice.deleteMany({ where: { id: link.deviceId, usernameKey: usernameKey(user.email) } })).count
      : 0;
    return { userId: link.userId, email: user.email, browserSessions, apiSessions, devicesForgotten };
  });
}

import { randomUUID } from "node:crypto";
import { isWellFormedOpaqueToken, newOpaqueToken } from "./opaque-token";
import type { Prisma, PrismaClient } from "@/lib/generated/prisma/client";
import { tokenDigest } from "./opaque-token";

/**
 * Opaque, rotating refresh tokens (lib/tokens/opaque-token.ts: 256 random bits), stored only as
 * their digest (tokenDigest in ./digest.ts).
 */

// Classifies the advisory locks taken here (two-int form), apart from any other user of them.
const FAMILY_LOCK_CLASS = 0x67_74_72_66;

type Db = PrismaClient | Prisma.TransactionClient;

export type IssuedRefreshToken = { token: string; familyId: string; expiresAtMs: number; newFamily: boolean };

export type RotationFailure = "unknown" | "expired" | "revoked" | "reused";

export type RotationResult =
  | { ok: true; userId: string; familyId: string; credentialGeneration: number; token: string; expiresAtMs: number; newFamily: false }
  | { ok: false; reason: RotationFailure; familyId?: string; userId?: string };

/** The digest a refresh token is stored and looked up by. */
export const refreshTokenDigest = tokenDigest;
export const isWellFormedRefreshToken = isWellFormedOpaqueToken;

/**
 * A family's absolute span and label, copied onto each of its tokens. `credentialGeneration`:
 * the user's, as the family's password check read it (kept on rotation).
 */
export type FamilyTerms = { createdAtMs: number; expiresAtMs: number; client: string; address: string; credentialGeneration: number };

/** REFRESH_FAMILY_LIFETIME_DAYS's default, for callers that name no lifetime. */
export const DEFAULT_FAMILY_LIFETIME_MS = 90 * 86_400_000;

/**
 * Starts a family (`familyId` null) or continues one with a fresh token valid for `ttlMs`, never
 * past the family's absolute end: rotation renews the token, not the family.
 */
export async function issueRefreshToken(
  db: Db,
  userId: string,
  familyId: string | null,
  ttlMs: number,
  nowMs: number,
  terms: Partial<FamilyTerms> = {},
): Promise<IssuedRefreshToken> {
  const token = newOpaqueToken();
  const family = familyId ?? randomUUID();
  const familyCreatedAtMs = terms.createdAtMs ?? nowMs;
  const familyExpiresAtMs = terms.expiresAtMs ?? familyCreatedAtMs + DEFAULT_FAMILY_LIFETIME_MS;
  const expiresAtMs = Math.min(nowMs + ttlMs, familyExpiresAtMs);
  await db.refreshToken.create({
    data: {
      tokenHash: refreshTokenDigest(token),
      familyId: family,
      userId,
      createdAt: new Date(nowMs),
      expiresAt: new Date(expiresAtMs),
      familyCreatedAt: new Date(familyCreatedAtMs),
      familyExpiresAt: new Date(familyExpiresAtMs),
      ...(terms.client !== undefined ? { client: terms.client } : {}),
      ...(terms.address !== undefined ? { address: terms.address } : {}),
      ...(terms.credentialGeneration !== undefined ? { credentialGeneration: terms.credentialGeneration } : {}),
    },
  });
  return { token, familyId: family, expiresAtMs, newFamily: familyId === null };
}

export type RefreshFamilyView = { familyId: string; client: string; address: string; createdAt: Date; lastUsedAt: Date; expiresAt: Date };

/** The user's live API sessions: one live token per family, newest use first. */
export async function listLiveFamilies(prisma: PrismaClient, userId: string, nowMs: number): Promise<RefreshFamilyView[]> {
  const user = await prisma.user.findUnique({ where: { id: userId }, select: { credentialGeneration: true } });
  if (!user) return [];
  const rows = await prisma.refreshToken.findMany({
    where: {
      userId,
      rotatedAt: null,
      revokedAt: null,
      expiresAt: { gt: new Date(nowMs) },
      credentialGeneration: { gte: user.credentialGeneration },
    },
    orderBy: { createdAt: "desc" },
    take: 100,
    select: { familyId: true, client: true, address: true, familyCreatedAt: true, createdAt: true, expiresAt: true },
  });
  return rows.map((row) => ({
    familyId: row.familyId,
    client: row.client,
    address: row.address,
    createdAt: row.familyCreatedAt,
    lastUsedAt: row.createdAt,
    expiresAt: row.expiresAt,
  }));
}

/** Revokes one family if it is the user's (a family id from a form is not trusted); how many tokens were live. */
export async function revokeUserFamily(prisma: PrismaClient, userId: string, familyId: string, nowMs: number): Promise<number> {
  const owned = await prisma.refreshToken.findFirst({ where: { familyId, userId }, select: { id: true } });
  return owned ? revokeRefreshFamily(prisma, familyId, nowMs) : 0;
}

/** Revokes every family of the user (password change, sign out everywhere else); how many families were live. */
export async function revokeAllFamilies(prisma: PrismaClient, userId: string, nowMs: number): Promise<number> {
  // Rotated tokens included: a family whose live token is being rotated right now is found by its old one.
  const families = await prisma.refreshToken.findMany({
    where: { userId, revokedAt: null },
    distinct: ["familyId"],
    select: { familyId: true },
  });
  let live = 0;
  for (const { familyId } of families) if ((await revokeRefreshFamily(prisma, familyId, nowMs)) > 0) live++;
  return live;
}

/**
 * Serialises every write to one family for the rest of the transaction. Without it, a revocation
 * running while a rotation inserts the family's next token could miss that token (the UPDATE's
 * snapshot predates the insert) and leave one live token in a family meant to be dead.
 */
async function lockFamily(tx: Prisma.TransactionClient, familyId: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${FAMILY_LOCK_CLASS}::int4, hashtext(${familyId}))`;
}

async function revokeLockedFamily(tx: Prisma.TransactionClient, familyId: string, nowMs: number): Promise<number> {
  const { count } = await tx.refreshToken.updateMany({ where: { familyId, revokedAt: null }, data: { revokedAt: new Date(nowMs) } });
  return count;
}

// Many refreshes of one family queue on its lock; give them time rather than failing with a 500.
const TRANSACTION_OPTIONS = { maxWait: 10_000, timeout: 10_000 };

/** Revokes every token of a family (sign-out everywhere, a deleted account); returns how many were live. */
export async function revokeRefreshFamily(prisma: PrismaClient, familyId: string, nowMs: number): Promise<number> {
  return prisma.$transaction(async (tx) => {
    await lockFamily(tx, familyId);
    return revokeLockedFamily(tx, familyId, nowMs);
  }, TRANSACTION_OPTIONS);
}

/**
 * Exchanges a refresh token for a new one in the same family. The conditional update is the
 * arbiter: only a token that is neither rotated, revoked nor expired can be claimed, and only once.
 * Presenting an already rotated token again is reuse (someone holds a copy), so the whole family
 * is revoked, the newest token included.
 *
 * Two concurrent refreshes with one token: exactly one claims it; the other finds it rotated and
 * is treated as reuse, revoking the family, so the winner's new token dies too. That is the
 * standard, safe outcome: the server cannot tell a client's double submit from a thief racing the
 * client, and the cost of being wrong in the safe direction is one extra sign-in.
 */
export async function rotateRefreshToken(prisma: PrismaClient, presented: string, ttlMs: number, nowMs: number): Promise<RotationResult> {
  if (!isWellFormedRefreshToken(presented)) return { ok: false, reason: "unknown" };
  const tokenHash = refreshTokenDigest(presented);
  const now = new Date(nowMs);

  return prisma.$transaction(async (tx): Promise<RotationResult> => {
    const found = await tx.refreshToken.findUnique({ where: { tokenHash }, select: { familyId: true } });
    if (!found) return { ok: false, reason: "unknown" };
    await lockFamily(tx, found.familyId);

    const claimed = await tx.refreshToken.updateMany({
      where: { tokenHash, rotatedAt: null, revokedAt: null, expiresAt: { gt: now } },
      data: { rotatedAt: now },
    });
    // Read after the claim and under the family lock, so it sees every committed change.
    const row = await tx.refreshToken.findUniqueOrThrow({
      where: { tokenHash },
      select: {
        userId: true,
        familyId: true,
        rotatedAt: true,
        revokedAt: true,
        familyCreatedAt: true,
        familyExpiresAt: true,
        client: true,
        address: true,
        credentialGeneration: true,
      },
    });
    const { userId, familyId } = row;

    if (claimed.count === 1) {
      // A family made under an older password ends here, even one that a sign-in in flight wrote
      // after the password change. (A family whose account is gone is the caller's to refuse.)
      const user = await tx.user.findUnique({ where: { id: userId }, select: { credentialGeneration: true } });
      if (user && row.credentialGeneration < user.credentialGeneration) {
        await revokeLockedFamily(tx, familyId, nowMs);
        return { ok: false, reason: "revoked", familyId, userId };
      }
      const terms = {
        createdAtMs: row.familyCreatedAt.getTime(),
        expiresAtMs: row.familyExpiresAt.getTime(),
        client: row.client,
        address: row.address,
        credentialGeneration: row.credentialGeneration,
      };
      const next = await issueRefreshToken(tx, userId, familyId, ttlMs, nowMs, terms);
      return {
        ok: true,
        userId,
        familyId,
        credentialGeneration: row.credentialGeneration,
        token: next.token,
        expiresAtMs: next.expiresAtMs,
        newFamily: false,
      };
    }
    // Checked first: a rotated token presented again is a theft signal even if it has since
    // expired or its family was already revoked (revoking again changes nothing).
    if (row.rotatedAt !== null) {
      await revokeLockedFamily(tx, familyId, nowMs);
      return { ok: false, reason: "reused", familyId, userId };
    }
    if (row.revokedAt !== null) return { ok: false, reason: "revoked", familyId, userId };
    return { ok: false, reason: "expired", familyId, userId };
  }, TRANSACTION_OPTIONS);
}

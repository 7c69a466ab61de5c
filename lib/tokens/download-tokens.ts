import { randomBytes } from "node:crypto";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { tokenDigest, uuidSchema } from "./opaque-token";

/** A download link's token lives this long, unless it is spent first. */
const DOWNLOAD_TOKEN_TTL_MS = 10 * 60_000;

/**
 * A token for one report's download link (GET /api/v1/reports/{id}?token=…), stored as a digest.
 * A query string ends up in logs, history and Referer headers, so the token opens only the
 * report it names and only once. Null when the report is not the user's (or does not exist).
 */
export async function issueDownloadToken(
  prisma: PrismaClient,
  userId: string,
  reportId: string,
  nowMs: number,
): Promise<{ token: string; expiresAt: Date } | null> {
  if (!uuidSchema.safeParse(reportId).success) return null;
  const report = await prisma.report.findFirst({ where: { id: reportId, userId }, select: { id: true } });
  if (!report) return null;
  const token = randomBytes(32).toString("base64url");
  const expiresAt = new Date(nowMs + DOWNLOAD_TOKEN_TTL_MS);
  await prisma.downloadToken.create({ data: { userId, reportId, tokenHash: tokenDigest(token), expiresAt } });
  return { token, expiresAt };
}

/**
 * Spends a download token on the report it names: the user it was issued to, or null (unknown,
 * expired, already used, or issued for another report). The conditional UPDATE is the arbiter,
 * so two requests racing with one link get one download between them.
 */
export async function spendDownloadToken(prisma: PrismaClient, token: string, reportId: string, nowMs: number): Promise<string | null> {
  if (!uuidSchema.safeParse(reportId).success) return null;
  const now = new Date(nowMs);
  const rows = await prisma.$queryRaw<{ userId: string }[]>`
    UPDATE "DownloadToken" SET "usedAt" = ${now}
    WHERE "tokenHash" = ${tokenDigest(token)} AND "reportId" = ${reportId}::uuid AND "usedAt" IS NULL AND "expiresAt" > ${now}
    RETURNING "userId"::text AS "userId"`;
  return rows[0]?.userId ?? null;
}

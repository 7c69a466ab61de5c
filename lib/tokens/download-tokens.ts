import { randomBytes } from "node:crypto";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { tokenDigest } from "./digest";

/** A download link's token lives this long. */
const DOWNLOAD_TOKEN_TTL_MS = 10 * 60_000;

/** A short-lived token for a report download link (GET /api/v1/reports/{id}?token=…), stored as a digest. */
export async function issueDownloadToken(prisma: PrismaClient, userId: string, nowMs: number): Promise<{ token: string; expiresAt: Date }> {
  const token = randomBytes(32).toString("base64url");
  const expiresAt = new Date(nowMs + DOWNLOAD_TOKEN_TTL_MS);
  await prisma.downloadToken.create({ data: { userId, tokenHash: tokenDigest(token), expiresAt } });
  return { token, expiresAt };
}

/** The user a live download token was issued to, or null (unknown or expired). */
export async function downloadTokenOwner(prisma: PrismaClient, token: string, nowMs: number): Promise<string | null> {
  const found = await prisma.downloadToken.findUnique({
    where: { tokenHash: tokenDigest(token) },
    select: { userId: true, expiresAt: true },
  });
  return found && found.expiresAt.getTime() > nowMs ? found.userId : null;
}

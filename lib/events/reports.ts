import type { SecurityEvents } from "@/lib/events/security-events";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { capReports } from "@/lib/retention/retention";
import { uuidSchema } from "@/lib/tokens/opaque-token";

/**
 * The caller's sign-in history report from their last 1,000 security events, stored so it can be
 * downloaded later. Only the newest `keepPerUser` reports of a user are kept.
 */
export async function buildReport(prisma: PrismaClient, events: SecurityEvents, userId: string, nowMs: number, keepPerUser: number) {
  const recent = await events.recent(userId, 1_000);
  const count = (kind: string) => recent.filter((event) => event.kind === kind).length;
  const content = {
    generatedAt: new Date(nowMs).toISOString(),
    signIns: count("sign_in_succeeded"),
    failedSignIns: count("sign_in_failed"),
    lockouts: count("locked"),
    apiSessions: count("refresh_family_created"),
    events: recent.map((event) => ({ kind: event.kind, address: event.address, at: event.at.toISOString() })),
  };
  const report = await prisma.report.create({ data: { userId, content }, select: { id: true, createdAt: true } });
  await capReports(prisma, userId, keepPerUser);
  return report;
}

/** One of the user's reports, or null: another user's report and one that does not exist (or a malformed id) look alike. */
export async function findReport(prisma: PrismaClient, userId: string, id: string) {
  if (!uuidSchema.safeParse(id).success) return null;
  return prisma.report.findFirst({ where: { id, userId }, select: { id: true, createdAt: true, content: true } });
}

import type { PrismaClient } from "@/lib/generated/prisma/client";

export type DeletedCounts = {
  browserSessions: number;
  refreshTokens: number;
  downloadTokens: number;
  reports: number;
  securityEvents: number;
  emailTokens: number;
  passkeys: number;
  knownDevices: number;
  lockouts: number;
  users: number;
};

/**
 * Deletes an account and every row about it in one transaction: it is gone whole or stays whole,
 * whatever stops the process in between. The rows it owns go with it (onDelete: Cascade); known
 * devices and lockouts are keyed by the username's key, and are deleted by it here. Null when there
 * was no account to delete (another request deleted it first). Its sessions, refresh families and
 * access tokens are dead on every instance once this commits: each is checked against its row.
 */
export async function deleteAccount(prisma: PrismaClient, userId: string, usernameKey: string): Promise<DeletedCounts | null> {
  return prisma.$transaction(async (tx) => {
    const found = await tx.user.findUnique({
      where: { id: userId },
      select: {
        _count: {
          select: {
            browserSessions: true,
            refreshTokens: true,
            downloadTokens: true,
            reports: true,
            securityEvents: true,
            emailTokens: true,
            passkeys: true,
          },
        },
      },
    });
    if (!found) return null;
    // The account first: its row lock makes a sign-in's guarded writes (which lock it first too)
    // wait and then find no account, so no device of theirs lands after the devices go below.
    const users = (await tx.user.deleteMany({ where: { id: userId } })).count;
    // Two parallel deletes both saw the account: the one that did not delete it deletes nothing.
    if (users === 0) return null;
    const knownDevices = (await tx.knownDevice.deleteMany({ where: { usernameKey } })).count;
    const lockouts = (await tx.signInLockout.deleteMany({ where: { usernameKey } })).count;
    return { ...found._count, knownDevices, lockouts, users };
  });
}

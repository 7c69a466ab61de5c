import type { PrismaClient } from "@/lib/generated/prisma/client";
import type { NewPasskey } from "@/lib/passkeys/store";

/**
 * "Create an account with a passkey": the account is a row with no password and no confirmed
 * address (decision 39), so nothing signs in to it until its emailed link has made a passkey. One
 * statement for a new and a taken address (INSERT … ON CONFLICT DO NOTHING): the request costs the
 * same either way, and what differs happens afterwards, by email.
 */
export async function startPasskeyAccount(prisma: PrismaClient, input: { email: string; locale: string | null }): Promise<boolean> {
  const created = await prisma.user.createMany({
    data: { email: input.email, passwordHash: null, emailVerifiedAt: null, locale: input.locale },
    skipDuplicates: true,
  });
  return created.count === 1;
}

export type PasskeyLinkSpent =
  | {
      ok: true;
      passkeyId: string;
      user: { id: string; email: string; credentialGeneration: number };
      confirmed: boolean;
      /** A recovery's count of the account's other passkeys, removed with it (0 for a start). */
      passkeysRemoved: number;
    }
  | { ok: false; reason: "link" | "taken" };

/**
 * Spends a `new_passkey` link and stores the passkey it made, in one transaction: the link is
 * used once (of two parallel answers, one), only while the account still has no password and the
 * credential generation the link was issued under, and the address is confirmed with it. A
 * credential id that exists already (another account's key) rolls the whole back, link included.
 * A recovery (the address was confirmed before) removes every other passkey of the account and
 * raises its credential generation in the same transaction: the lost or stolen authenticator the
 * owner recovers from signs in no more, and a sign-in it began before this commits is dead too.
 */
export async function spendPasskeyLink(
  prisma: PrismaClient,
  link: { id: string; userId: string; credentialGeneration: number },
  passkey: NewPasskey & { name: string },
  nowMs: number,
): Promise<PasskeyLinkSpent> {
  const now = new Date(nowMs);
  const taken = new Error("credential id taken");
  try {
    return await prisma.$transaction(async (tx) => {
      const used = await tx.emailToken.updateMany({
        where: { id: link.id, purpose: "new_passkey", usedAt: null, expiresAt: { gt: now } },
        data: { usedAt: now },
      });
      if (used.count !== 1) return { ok: false, reason: "link" } as const;
      // The row lock holds a password change or a reset off until this commits (or finds it set).
      const [user] = await tx.user.updateManyAndReturn({
        where: { id: link.userId, credentialGeneration: link.credentialGeneration, passwordHash: null },
        data: { updatedAt: now },
        select: { id: true, email: true, credentialGeneration: true },
      });
      if (!user) throw new LinkStale();
      // A start confirms the address; a recovery finds it confirmed and keeps its date.
      const confirmed =
        (await tx.user.updateMany({ where: { id: user.id, emailVerifiedAt: null }, data: { emailVerifiedAt: now } })).count === 1;
      const { signCount, ...fields } = passkey;
      const [row] = await tx.passkey.createManyAndReturn({
        data: {
          ...fields,
          userId: user.id,
          publicKey: Buffer.from(fields.publicKey).toString("base64url"),
          signCount: BigInt(signCount),
          createdAt: now,
        },
        skipDuplicates: true,
        select: { id: true },
      });
      if (!row) throw taken;
      // Every other unused passkey link of the account dies with this one.
      await tx.emailToken.deleteMany({ where: { userId: user.id, purpose: "new_passkey", usedAt: null } });
      if (confirmed) return { ok: true, passkeyId: row.id, user, confirmed, passkeysRemoved: 0 } as const;
      const removed = await tx.passkey.deleteMany({ where: { userId: user.id, id: { not: row.id } } });
      const [raised] = await tx.user.updateManyAndReturn({
        where: { id: user.id },
        data: { credentialGeneration: { increment: 1 } },
        select: { id: true, email: true, credentialGeneration: true },
      });
      return { ok: true, passkeyId: row.id, user: raised ?? user, confirmed, passkeysRemoved: removed.count } as const;
    });
  } catch (error) {
    if (error === taken) return { ok: false, reason: "taken" };
    if (error instanceof LinkStale) return { ok: false, reason: "link" };
    throw error;
  }
}

/** The account changed under the link (a password set, its generation raised): rolled back, the link unspent. */
class LinkStale extends Error {}

import type { PrismaClient } from "@/lib/generated/prisma/client";
import { tokenDigest } from "@/lib/tokens/opaque-token";
import { isWellFormedOpaqueToken, newOpaqueToken } from "@/lib/tokens/opaque-token";

/** `new_passkey`: the link that makes a passkey for an account with no password (its start, or its recovery). */
export type EmailTokenPurpose = "verify_email" | "reset_password" | "unlock" | "new_passkey";

/** A link's token that is still good: unused, unexpired, newest of its purpose, issued under the user's current password. */
export type LiveEmailToken = { id: string; userId: string; email: string; purpose: EmailTokenPurpose; credentialGeneration: number };

/**
 * The EmailToken table: single-use links sent by email. Every way a token can be bad (forged,
 * truncated, oversized, expired, used, superseded, issued before a password change) reads as the
 * same "no such token", so a caller cannot tell one from another.
 */
export interface EmailTokens {
  /**
   * A new token for `userId`. A reset or unlock link deletes the user's earlier unused ones of its
   * purpose (only the newest works); verification links stay valid side by side until they expire,
   * since each needs the account's password anyway and a person often opens an older email.
   */
  issue(userId: string, purpose: EmailTokenPurpose, credentialGeneration: number, nowMs: number, lifetimeMs: number): Promise<string>;
  /** The token if it is live now (a verification link: and the address not yet confirmed); null otherwise. Reading does not use it. */
  find(token: string, purpose: EmailTokenPurpose, nowMs: number): Promise<LiveEmailToken | null>;
  /**
   * Whether `token` is a confirmation link (used or not, expired or not) of an account whose
   * address is confirmed: its page then says so instead of asking for a password. Only the
   * link's holder can ask, and the mailbox it went to is the one confirmed.
   */
  alreadyConfirmed(token: string): Promise<boolean>;
  /** Marks a live token used, once: of two concurrent uses exactly one gets true. */
  use(id: string, nowMs: number): Promise<boolean>;
  /**
   * Uses a reset token and sets the new password hash in one statement: the hash is stored only
   * if the token was live and the user's password has not changed since it was issued. Raises the
   * credential generation (ending every session made before), marks the address verified and
   * clears the breached mark.
   * Returns the new generation and the account's email, or null.
   */
  resetPassword(
    id: string,
    passwordHash: string,
    nowMs: number,
  ): Promise<{ userId: string; email: string; credentialGeneration: number } | null>;
  /** Deletes every unused token of the user (all purposes): after a reset, older links must not work. */
  revokeAll(userId: string): Promise<number>;
}

export function prismaEmailTokens(prisma: PrismaClient): EmailTokens {
  return {
    async issue(userId, purpose, credentialGeneration, nowMs, lifetimeMs) {
      const token = newOpaqueToken();
      const create = prisma.emailToken.create({
        data: {
          digest: tokenDigest(token),
          userId,
          purpose,
          credentialGeneration,
          createdAt: new Date(nowMs),
          expiresAt: new Date(nowMs + lifetimeMs),
        },
      });
      if (purpose === "verify_email") await create;
      else await prisma.$transaction([prisma.emailToken.deleteMany({ where: { userId, purpose, usedAt: null } }), create]);
      return token;
    },

    async find(token, purpose, nowMs) {
      if (!isWellFormedOpaqueToken(token)) return null;
      const row = await prisma.emailToken.findUnique({ where: { digest: tokenDigest(token) } });
      if (!row || row.purpose !== purpose || row.usedAt !== null || row.expiresAt.getTime() <= nowMs) return null;
      const user = await prisma.user.findUnique({
        where: { id: row.userId },
        select: { email: true, credentialGeneration: true, emailVerifiedAt: true, passwordHash: true },
      });
      if (!user || user.credentialGeneration !== row.credentialGeneration) return null;
      // A passkey link is for an account with no password: once one is set, a password's recovery applies.
      if (purpose === "new_passkey" && user.passwordHash !== null) return null;
      // A confirmed address leaves its other verification links nothing to do.
      if (purpose === "verify_email" && user.emailVerifiedAt !== null) return null;
      return { id: row.id, userId: row.userId, email: user.email, purpose, credentialGeneration: row.credentialGeneration };
    },

    async alreadyConfirmed(token) {
      if (!isWellFormedOpaqueToken(token)) return false;
      const row = await prisma.emailToken.findUnique({ where: { digest: tokenDigest(token) }, select: { purpose: true, userId: true } });
      if (!row || row.purpose !== "verify_email") return false;
      const user = await prisma.user.findUnique({ where: { id: row.userId }, select: { emailVerifiedAt: true } });
      return user?.emailVerifiedAt != null;
    },

    async use(id, nowMs) {
      const now = new Date(nowMs);
      const { count } = await prisma.emailToken.updateMany({ where: { id, usedAt: null, expiresAt: { gt: now } }, data: { usedAt: now } });
      return count === 1;
    },

    async resetPassword(id, passwordHash, nowMs) {
      const now = new Date(nowMs);
      const rows = await prisma.$queryRaw<{ id: string; email: string; credentialGeneration: number }[]>`
        WITH used AS (
          UPDATE "EmailToken" SET "usedAt" = ${now}
          WHERE "id" = ${id}::uuid AND "purpose" = 'reset_password' AND "usedAt" IS NULL AND "expiresAt" > ${now}
          RETURNING "userId", "credentialGeneration"
        )
        UPDATE "User" AS u
        SET "passwordHash" = ${passwordHash},
            "credentialGeneration" = u."credentialGeneration" + 1,
            "emailVerifiedAt" = COALESCE(u."emailVerifiedAt", ${now}),
            "passwordBreachedAt" = NULL,
            "updatedAt" = ${now}
        FROM used
        WHERE u."id" = used."userId" AND u."credentialGeneration" = used."credentialGeneration"
        RETURNING u."id", u."email", u."credentialGeneration"`;
      const row = rows[0];
      return row ? { userId: row.id, email: row.email, credentialGeneration: Number(row.credentialGeneration) } : null;
    },

    async revokeAll(userId) {
      // An undo link of a change of address stays: a reset by whoever made the change must not take it from the old address.
      const { count } = await prisma.emailToken.deleteMany({ where: { userId, usedAt: null, purpose: { not: "undo_email_change" } } });
      return count;
    },
  };
}

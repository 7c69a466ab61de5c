import type { Prisma, PrismaClient } from "@/lib/generated/prisma/client";
import { isWellFormedOpaqueToken, newOpaqueToken, tokenDigest } from "@/lib/tokens/opaque-token";

/** How long the old address can undo a change it was told of (issue 57: "within 7 days"). */
export const UNDO_EMAIL_CHANGE_MS = 7 * 86_400_000;

/** The two links of one change of address: the new address confirms, the old one undoes. */
export type ChangeLinks = { confirm: string | null; undo: string };

/** A link of a change, as it was issued: whose, from which address to which, and from which session. */
type ChangeRow = {
  id: string;
  userId: string;
  email: string;
  previousEmail: string;
  sessionId: string | null;
  credentialGeneration: number;
};

export type Rekey = (email: string) => string;

/** What a change of address did: who, from what to what, and the session it keeps (the one that asked). */
export type EmailChanged = { userId: string; from: string; to: string; keepSid: string | null };

/**
 * A change of address that could not be made. `invalid`: the link is forged, used, expired or
 * stale (the address or the password changed since it was issued); `taken`: another account has
 * the new address now (it registered between the request and the confirmation).
 */
export type ChangeRefused = { ok: false; reason: "invalid" | "taken" };

/**
 * Issues the links of a change from `from` to `to` (null: `to` is another account's, so nothing can
 * be confirmed; the old address is told alike, so its reader learns nothing either). Only the newest
 * confirmation link works; undo links stay side by side, since each belongs to a change the old
 * address was told of, and a later request (the intruder's, say) must not take one away.
 */
export async function issueChangeLinks(
  prisma: PrismaClient,
  change: { userId: string; from: string; to: string | null; sessionId: string | null; credentialGeneration: number },
  nowMs: number,
  confirmLifetimeMs: number,
): Promise<ChangeLinks> {
  const confirm = change.to === null ? null : newOpaqueToken();
  const undo = newOpaqueToken();
  const row = (token: string, purpose: string, lifetimeMs: number, to: string) => ({
    digest: tokenDigest(token),
    userId: change.userId,
    purpose,
    credentialGeneration: change.credentialGeneration,
    createdAt: new Date(nowMs),
    expiresAt: new Date(nowMs + lifetimeMs),
    email: to,
    previousEmail: change.from,
    sessionId: change.sessionId,
  });
  await prisma.$transaction([
    prisma.emailToken.deleteMany({ where: { userId: change.userId, purpose: "change_email", usedAt: null } }),
    ...(confirm && change.to ? [prisma.emailToken.create({ data: row(confirm, "change_email", confirmLifetimeMs, change.to) })] : []),
    prisma.emailToken.create({ data: row(undo, "undo_email_change", UNDO_EMAIL_CHANGE_MS, change.to ?? change.from) }),
  ]);
  return { confirm, undo };
}

type Tx = Prisma.TransactionClient;

/** The live link of `purpose` that `token` names, locked for this transaction; null for every bad token alike. */
async function liveLink(tx: Tx, token: string, purpose: string, nowMs: number): Promise<ChangeRow | null> {
  if (!isWellFormedOpaqueToken(token)) return null;
  const rows = await tx.$queryRaw<ChangeRow[]>`
    SELECT "id", "userId", "email", "previousEmail", "sessionId", "credentialGeneration" FROM "EmailToken"
    WHERE "digest" = ${tokenDigest(token)} AND "purpose" = ${purpose} AND "usedAt" IS NULL AND "expiresAt" > ${new Date(nowMs)}
      AND "email" IS NOT NULL AND "previousEmail" IS NOT NULL
    FOR UPDATE`;
  return rows[0] ?? null;
}

/** Spends a link inside the transaction: of two concurrent uses exactly one gets true. */
async function spend(tx: Tx, id: string, nowMs: number): Promise<boolean> {
  const now = new Date(nowMs);
  const { count } = await tx.emailToken.updateMany({ where: { id, usedAt: null, expiresAt: { gt: now } }, data: { usedAt: now } });
  return count === 1;
}

/**
 * Moves the account from `from` to `to` inside a transaction, if it still has `from`. Known devices
 * are keyed by the username's digest and each cookie is signed for it, so no device of the old
 * name can speak for the new one: they are forgotten (the browser that confirms its own request
 * becomes the new name's first, in the route). The "under attack" mark follows the account (its
 * new devices still confirm by email); the old name's streak stays with the old name, which
 * strangers may go on guessing, and the new name's (strangers guessing an address with no account
 * yet) now counts for the account. A unique violation (another account took `to`) propagates.
 */
async function moveAddress(tx: Tx, userId: string, from: string, to: string, key: Rekey, nowMs: number): Promise<boolean> {
  const { count } = await tx.user.updateMany({ where: { id: userId, email: from }, data: { email: to, emailVerifiedAt: new Date(nowMs) } });
  if (count !== 1) return false;
  const [oldKey, newKey] = [key(from), key(to)];
  await tx.knownDevice.deleteMany({ where: { usernameKey: { in: [oldKey, newKey] } } });
  await tx.$executeRaw`
    INSERT INTO "SignInLockout" ("usernameKey", "failureCount", "lastFailureAt", "lastFailedAt")
    SELECT ${newKey}, 0, "lastFailedAt", "lastFailedAt" FROM "SignInLockout" WHERE "usernameKey" = ${oldKey} AND "lastFailedAt" IS NOT NULL
    ON CONFLICT ("usernameKey") DO UPDATE SET "lastFailedAt" = GREATEST("SignInLockout"."lastFailedAt", EXCLUDED."lastFailedAt")`;
  return true;
}

/** Another account has the address: Prisma's P2002, or the driver adapter's PostgreSQL 23505 as it passes it on. */
function isUniqueViolation(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Object && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    const { code, message } = cause as { code?: unknown; message?: unknown };
    if (code === "P2002" || code === "23505") return true;
    if (typeof message === "string" && message.includes("violates unique constraint")) return true;
  }
  return false;
}

/**
 * The new address's link, confirmed by its button: in one transaction, the link is spent and the
 * account moves to the new address, only while it still has the address and the password the
 * request was made under. Two confirmations of one link: one changes, the other finds it spent.
 * Another account registered the new address meanwhile: `taken`, and the link is spent.
 */
export async function confirmEmailChange(
  prisma: PrismaClient,
  token: string,
  key: Rekey,
  nowMs: number,
): Promise<({ ok: true } & EmailChanged) | ChangeRefused> {
  try {
    return await prisma.$transaction(async (tx) => {
      const link = await liveLink(tx, token, "change_email", nowMs);
      if (!link || !(await spend(tx, link.id, nowMs))) return { ok: false, reason: "invalid" } as const;
      const user = await tx.user.findUnique({ where: { id: link.userId }, select: { email: true, credentialGeneration: true } });
      if (!user || user.email !== link.previousEmail || user.credentialGeneration !== link.credentialGeneration)
        return { ok: false, reason: "invalid" } as const;
      if (!(await moveAddress(tx, link.userId, link.previousEmail, link.email, key, nowMs)))
        return { ok: false, reason: "invalid" } as const;
      return { ok: true, userId: link.userId, from: link.previousEmail, to: link.email, keepSid: link.sessionId } as const;
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    // The transaction rolled back with the link: spent here, so a retry cannot try again later.
    await prisma.emailToken.updateMany({ where: { digest: tokenDigest(token), usedAt: null }, data: { usedAt: new Date(nowMs) } });
    return { ok: false, reason: "taken" };
  }
}

/**
 * The old address's "Undo": the account goes back to the address it had, if it still has the one
 * this change set (confirmed) or never left it (not confirmed yet: the pending change dies).
 * Every pending change link of the account dies too. `restored` says whether the address moved
 * back. What follows (sessions ended, the username marked, a reset offered) is the caller's.
 */
export async function undoEmailChange(
  prisma: PrismaClient,
  token: string,
  key: Rekey,
  nowMs: number,
): Promise<({ ok: true; restored: boolean } & EmailChanged) | ChangeRefused> {
  try {
    return await prisma.$transaction(async (tx) => {
      const link = await liveLink(tx, token, "undo_email_change", nowMs);
      if (!link || !(await spend(tx, link.id, nowMs))) return { ok: false, reason: "invalid" } as const;
      const user = await tx.user.findUnique({ where: { id: link.userId }, select: { email: true } });
      if (!user) return { ok: false, reason: "invalid" } as const;
      await tx.emailToken.deleteMany({ where: { userId: link.userId, purpose: "change_email", usedAt: null } });
      const changed = { userId: link.userId, from: link.email, to: link.previousEmail, keepSid: null };
      if (user.email === link.previousEmail) return { ok: true, restored: false, ...changed } as const;
      // Changed again since (to a third address): still the owner's account, so it comes back too.
      const restored = await moveAddress(tx, link.userId, user.email, link.previousEmail, key, nowMs);
      return restored ? ({ ok: true, restored, ...changed, from: user.email } as const) : ({ ok: false, reason: "invalid" } as const);
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    return { ok: false, reason: "taken" };
  }
}

/** The operator's change (`npm run admin -- change-email`): the same move, without links. */
export async function changeEmailNow(
  prisma: PrismaClient,
  from: string,
  to: string,
  key: Rekey,
  nowMs: number,
): Promise<({ ok: true } & EmailChanged) | { ok: false; reason: "not_found" | "taken" }> {
  try {
    return await prisma.$transaction(async (tx) => {
      const user = await tx.user.findUnique({ where: { email: from }, select: { id: true } });
      if (!user || !(await moveAddress(tx, user.id, from, to, key, nowMs))) return { ok: false, reason: "not_found" } as const;
      await tx.emailToken.deleteMany({ where: { userId: user.id, purpose: "change_email", usedAt: null } });
      return { ok: true, userId: user.id, from, to, keepSid: null } as const;
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    return { ok: false, reason: "taken" };
  }
}

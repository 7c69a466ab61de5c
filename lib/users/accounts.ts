import type { PrismaClient } from "../generated/prisma/client";
import type { PasswordHasher } from "@/lib/password/hash";
import { NOW_UTC, type Sql } from "@/lib/db/sql";
import type { Guard } from "@/lib/db/one-statement";
import { FACTOR_SUMMARY_COLUMNS, factorSummaryOf, type FactorSummary, type FactorSummaryRow } from "@/lib/factors/store";

export type Credentials = { email: string; password: string };
export type AccountUser = { id: string; email: string; credentialGeneration: number };
/** A user whose password was just verified, with the credential generation that hash belongs to. */
export type VerifiedUser = AccountUser;

/**
 * Creates an account from already validated and normalised input. The hash is made before the
 * insert, so a taken address costs as much time as a new one; the unique index decides races.
 */
export async function registerAccount(
  prisma: PrismaClient,
  input: Credentials & { locale?: string; timeZone?: string },
  hasher: PasswordHasher,
  /** When the address was verified: null for a self-registered account until its owner opens the link. */
  emailVerifiedAtMs: number | null,
): Promise<{ ok: true; user: AccountUser } | { ok: false; reason: "email_taken" }> {
  const passwordHash = await hasher.hash(input.password);
  // One statement for both outcomes (INSERT … ON CONFLICT DO NOTHING): a taken address costs the
  // same query as a new one, where a failed insert would cost an error's round of handling.
  const [user] = await prisma.user.createManyAndReturn({
    data: {
      email: input.email,
      passwordHash,
      emailVerifiedAt: emailVerifiedAtMs === null ? null : new Date(emailVerifiedAtMs),
      locale: input.locale ?? null,
      timeZone: input.timeZone ?? null,
    },
    skipDuplicates: true,
    select: { id: true, email: true, credentialGeneration: true, locale: true, timeZone: true },
  });
  return user ? { ok: true, user } : { ok: false, reason: "email_taken" };
}

/**
 * The account a code may be mailed to before its password is checked (mailbox first): one that
 * exists and, where confirmation is required, has confirmed its address; null otherwise. One
 * statement either way, so an address with no account costs what one with an account costs.
 */
export async function mailableAccount(
  sql: Sql,
  email: string,
  requireVerification: boolean,
): Promise<{ id: string; email: string; credentialGeneration: number } | null> {
  const [user] = await sql.rows<{ id: string; email: string; credentialGeneration: number; emailVerified: boolean }>(
    `SELECT u."id"::text AS "id", u."email", u."credentialGeneration", u."emailVerifiedAt" IS NOT NULL AS "emailVerified"
     FROM "User" u WHERE u."email" = $1`,
    [email],
  );
  if (!user || (requireVerification && !user.emailVerified)) return null;
  return { id: user.id, email: user.email, credentialGeneration: user.credentialGeneration };
}

/**
 * Checks a password. An unknown email still pays the verification against a dummy hash with the
 * same parameters (the hasher's), so the answer and its timing are the same for both failures.
 * Returns the user on success, null otherwise; `rehashed` says a weaker stored hash was upgraded.
 */
export async function verifyCredentials(
  sql: Sql,
  input: Credentials,
  hasher: PasswordHasher,
  onRehashError: (error: unknown) => void = () => {},
): Promise<
  | (VerifiedUser & {
      rehashed: boolean;
      emailVerified: boolean;
      passwordBreached: boolean;
      signedInBefore: boolean;
      lastLocale: string | null;
      /** Whether a right password leads to a second step, read with the hash (lib/factors/store.ts). */
      factors: FactorSummary;
    })
  | null
> {
  // The hash and its generation in one read: a session made from this check is as old as this hash.
  // Straight to the driver (lib/db/sql.ts): every password attempt that reaches Argon2id reads it,
  // the factor summary with it, so that a right password and a wrong one send the same statements.
  const [user] = await sql.rows<
    {
      id: string;
      email: string;
      /** Null for an account started with a passkey: verified against the dummy hash, as an unknown address. */
      passwordHash: string | null;
      credentialGeneration: number;
      emailVerified: boolean;
      passwordBreached: boolean;
      signedInBefore: boolean;
      lastLocale: string | null;
    } & FactorSummaryRow
  >(
    `SELECT u."id"::text AS "id", u."email", u."passwordHash", u."credentialGeneration", u."emailVerifiedAt" IS NOT NULL AS "emailVerified",
       u."passwordBreachedAt" IS NOT NULL AS "passwordBreached", u."firstSignedInAt" IS NOT NULL AS "signedInBefore", u."lastLocale",
       ${FACTOR_SUMMARY_COLUMNS}
     FROM "User" u WHERE u."email" = $1`,
    [input.email],
  );
  const checked = await hasher.verify(user?.passwordHash ?? null, input.password);
  if (!user || !checked.valid) return null;
  let rehashed = false;
  if (checked.rehash) {
    try {
      const passwordHash = await hasher.hash(input.password);
      // Only replace the hash that was verified, so a concurrent password change wins.
      rehashed =
        (await sql.run(`UPDATE "User" SET "passwordHash" = $1, "updatedAt" = ${NOW_UTC} WHERE "id" = $2::uuid AND "passwordHash" = $3`, [
          passwordHash,
          user.id,
          user.passwordHash,
        ])) === 1;
    } catch (error) {
      // The sign-in is valid either way; the upgrade is retried on the next one.
      onRehashError(error);
    }
  }
  return {
    id: user.id,
    email: user.email,
    credentialGeneration: user.credentialGeneration,
    rehashed,
    emailVerified: user.emailVerified,
    passwordBreached: user.passwordBreached,
    // The first-sign-in mark is never cleared: an account that has it needs no statement to learn it.
    signedInBefore: user.signedInBefore,
    lastLocale: user.lastLocale,
    factors: factorSummaryOf(user),
  };
}

/**
 * Whether a sign-in has something to record: the first-sign-in mark, or a language other than the
 * last one. A returning account in its usual language costs no statement (what the check read says so).
 */
export function signInToRecord(user: { signedInBefore?: boolean; lastLocale?: string | null }, locale: string | null): boolean {
  return !user.signedInBefore || (locale !== null && locale !== user.lastLocale);
}

/**
 * Records a successful sign-in: the language it was made in (the account's mails follow it; null
 * leaves the last one as it is) and, the first time, the first-sign-in mark; true when it is the
 * account's first ever. One statement: the row is locked by the sub-select before it is read, so
 * of two first sign-ins racing, the second reads the first's mark and is not first too.
 */
export async function recordSignIn(prisma: PrismaClient, userId: string, nowMs: number, locale: string | null): Promise<boolean> {
  // Raw, because Prisma's update wraps its statement in BEGIN and COMMIT (three round trips), and
  // cannot return what the row held before.
  const now = new Date(nowMs);
  const rows = await prisma.$queryRaw<{ first: boolean }[]>`
    UPDATE "User" AS u
    SET "firstSignedInAt" = COALESCE(before."firstSignedInAt", ${now}),
        "lastLocale" = COALESCE(${locale}::text, before."lastLocale"),
        "updatedAt" = ${now}
    FROM (SELECT "firstSignedInAt", "lastLocale" FROM "User" WHERE "id" = ${userId}::uuid FOR UPDATE) AS before
    WHERE u."id" = ${userId}::uuid
    RETURNING before."firstSignedInAt" IS NULL AS "first"`;
  return rows[0]?.first === true;
}

/**
 * Marks an address confirmed (the emailed link was just spent with the registration password).
 * True when this call confirmed it, false when it already was.
 */
export async function confirmAddress(prisma: PrismaClient, userId: string, nowMs: number): Promise<boolean> {
  const { count } = await prisma.user.updateMany({
    where: { id: userId, emailVerifiedAt: null },
    data: { emailVerifiedAt: new Date(nowMs) },
  });
  return count === 1;
}

/**
 * Whether the account has a password (one started with a passkey has none until its owner sets one:
 * decision 39). A count: the hash itself is never read here.
 */
export async function hasPassword(prisma: PrismaClient, userId: string): Promise<boolean> {
  return (await prisma.user.count({ where: { id: userId, passwordHash: { not: null } } })) === 1;
}

/**
 * Whether the account has a factor besides its password (a passkey or an authenticator app): the password's
 * minimum length depends on it (NIST SP 800-63B-4 §3.1.1.2). One read of the user's own row;
 * another factor's table is one more line in `_count`.
 */
export async function hasOtherFactor(prisma: PrismaClient, userId: string): Promise<boolean> {
  // A passkey, or an authenticator app that is on (a setup not yet confirmed is no factor).
  const user = await prisma.user.findUnique({
    where: { id: userId },
    select: { _count: { select: { passkeys: true } }, totpFactor: { select: { enabledAt: true } } },
  });
  return (user?._count.passkeys ?? 0) > 0 || user?.totpFactor?.enabledAt != null;
}

/**
 * Stores a new password hash and a new credential generation in one UPDATE (every session and
 * refresh family made under the old password is dead from its commit, including one a sign-in in
 * flight writes afterwards), and clears the breached mark; only if the account is still under
 * `credentialGeneration`, the one its current password was checked under: a reset, another change
 * or "sign out everywhere" that landed since wins, and this change is not stored. Null then, or
 * when the account is gone.
 */
export async function storeNewPassword(
  prisma: PrismaClient,
  user: { id: string; credentialGeneration: number },
  passwordHash: string,
  /** Only where the account has no password yet ("Set a password"). */
  whileNone = false,
): Promise<{ userId: string; email: string; credentialGeneration: number } | null> {
  const [stored] = await prisma.user.updateManyAndReturn({
    where: { id: user.id, credentialGeneration: user.credentialGeneration, ...(whileNone ? { passwordHash: null } : {}) },
    data: { passwordHash, credentialGeneration: { increment: 1 }, passwordBreachedAt: null },
    select: { id: true, email: true, credentialGeneration: true },
  });
  return stored ? { userId: stored.id, email: stored.email, credentialGeneration: stored.credentialGeneration } : null;
}

/**
 * What a sign-in's writes hold to (lib/db/one-statement.ts): the account, still under the
 * credential generation its check read. A password change or reset, "sign out everywhere" and the
 * operator's revoke-sessions raise the generation before they revoke, so one that lands before
 * the writes leaves them unwritten (no session, and no known device outliving the change), and one
 * that lands after them waits for their commit and then ends what they wrote. A deleted account
 * leaves them unwritten too.
 */
export const credentialsUnchanged =
  (user: { id: string; credentialGeneration: number }): Guard =>
  (param) =>
    `SELECT 1 FROM "User" WHERE "id" = ${param(user.id)}::uuid AND "credentialGeneration" = ${param(user.credentialGeneration)} FOR SHARE`;

/**
 * Marks the account's current password as found in a breach corpus, unless it was already
 * marked or the password changed since `passwordHash` was read: true when this call marked it.
 */
export async function markPasswordBreached(
  prisma: PrismaClient,
  userId: string,
  credentialGeneration: number,
  nowMs: number,
): Promise<boolean> {
  const { count } = await prisma.user.updateMany({
    where: { id: userId, credentialGeneration, passwordBreachedAt: null },
    data: { passwordBreachedAt: new Date(nowMs) },
  });
  return count === 1;
}

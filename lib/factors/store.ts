import type { PrismaClient } from "@/lib/generated/prisma/client";
import type { Sql } from "@/lib/db/sql";
import { canonicalRecoveryCode, newRecoveryCodes, recoveryCodeDigest } from "./recovery-codes";
import { openSecret, sealSecret, type SealKey } from "./sealed-secret";
import { matchingStep, newTotpSecret } from "./totp";

/** Which second steps an account offers after its password; `due` when at least one must be passed. */
export type FactorSummary = {
  totp: boolean;
  /** The owner asked for a passkey after the password. */
  passkeyAfterPassword: boolean;
  passkeys: number;
  recoveryCodesLeft: number;
  due: boolean;
};

/**
 * The summary's columns, for a statement on "User" named `u`: the summary's own read, and the
 * password check's (lib/users/accounts.ts), which reads them with the hash so that a right
 * password costs no statement more (issue 28). The text lives here, beside the tables it reads.
 */
export const FACTOR_SUMMARY_COLUMNS = `u."passkeySecondFactor",
  EXISTS (SELECT 1 FROM "TotpFactor" t WHERE t."userId" = u."id" AND t."enabledAt" IS NOT NULL) AS "totpOn",
  (SELECT COUNT(*) FROM "Passkey" p WHERE p."userId" = u."id")::int AS "passkeys",
  (SELECT COUNT(*) FROM "RecoveryCode" r WHERE r."userId" = u."id" AND r."usedAt" IS NULL)::int AS "recoveryCodesLeft"`;

export type FactorSummaryRow = { passkeySecondFactor: boolean; totpOn: boolean; passkeys: number; recoveryCodesLeft: number };

/** The summary from FACTOR_SUMMARY_COLUMNS' row (none: an account that is gone has no factor). */
export function factorSummaryOf(row: FactorSummaryRow | undefined): FactorSummary {
  const totpOn = row?.totpOn ?? false;
  // The owner's choice holds even with no passkey left (a reset that took every passkey must not
  // turn the second step off: ASVS 5.0 6.4.3); the step is then a recovery code.
  const passkeyAfterPassword = row?.passkeySecondFactor ?? false;
  return {
    totp: totpOn,
    passkeyAfterPassword,
    passkeys: row?.passkeys ?? 0,
    recoveryCodesLeft: row?.recoveryCodesLeft ?? 0,
    due: totpOn || passkeyAfterPassword,
  };
}

/** How long a setup waits for its first code: as long as the fresh authentication that started it. */
export const TOTP_SETUP_MS = 10 * 60_000;

export type AnswerCheck = { ok: true; spend(): Promise<boolean> } | { ok: false; reason: "wrong" | "reused" | "no_factor" | "unreadable" };

/**
 * The second factors' tables (TotpFactor, RecoveryCode, and User.passkeySecondFactor) and
 * nothing else: when a code is asked for and what a failure costs are the second step's
 * (lib/auth/second-step.ts). Every "good once" is a compare-and-set in one statement, so two
 * parallel uses of one code cannot both pass, on any number of instances.
 */
export interface Factors {
  summary(userId: string): Promise<FactorSummary>;
  /**
   * A new authenticator-app secret being set up by this browser session (replacing one not yet
   * on); the secret, to show; null when an app is already on (setting up never turns one off).
   */
  beginTotp(userId: string, sessionId: string, nowMs: number): Promise<Uint8Array | null>;
  /** The secret of an app this session is setting up, within TOTP_SETUP_MS, to show again; else null. */
  totpBeingSetUp(userId: string, sessionId: string, nowMs: number): Promise<Uint8Array | null>;
  /** Turns this session's setup on with its first code, once; false for a wrong code, another session's or a stale setup. */
  confirmTotp(userId: string, sessionId: string, code: string, nowMs: number): Promise<boolean>;
  /**
   * A code of the app that is on, checked without spending it: `spend()` then accepts it once
   * (false when another use of this or a later step came first). Checking first lets the caller
   * spend its pending sign-in before the code, so a code is never burnt on a sign-in that cannot finish.
   */
  checkTotp(userId: string, code: string, nowMs: number): Promise<AnswerCheck>;
  removeTotp(userId: string): Promise<boolean>;
  setPasskeyAfterPassword(userId: string, on: boolean): Promise<void>;
  /** Ten new codes replacing every old one (used or not); the codes, to show once. */
  replaceRecoveryCodes(userId: string, nowMs: number): Promise<string[]>;
  /** A recovery code of the account, checked without spending it; `spend()` then uses it once. */
  checkRecoveryCode(userId: string, typed: string, nowMs: number): Promise<AnswerCheck>;
  /** How many unused recovery codes the account has. */
  recoveryCodesLeft(userId: string): Promise<number>;
  removeRecoveryCodes(userId: string): Promise<number>;
  /** The operator's last resort: every factor and code of the account gone; how many of each. */
  removeAll(userId: string): Promise<{ totp: number; recoveryCodes: number; passkeyAfterPassword: boolean }>;
}

/** `sql` serves the summary every right password reads (lib/db/sql.ts); the rest goes through Prisma. */
export function prismaFactors(prisma: PrismaClient, sql: Sql, keys: { seal: SealKey; recoveryCodes: string }): Factors {
  const codesLeft = (userId: string) => prisma.recoveryCode.count({ where: { userId, usedAt: null } });

  return {
    async summary(userId) {
      // One statement, not four: on the embedded database each round trip waits its turn on one thread (issue 28).
      const [row] = await sql.rows<FactorSummaryRow>(`SELECT ${FACTOR_SUMMARY_COLUMNS} FROM "User" u WHERE u."id" = $1::uuid`, [userId]);
      return factorSummaryOf(row);
    },

    async beginTotp(userId, sessionId, nowMs) {
      const secret = newTotpSecret();
      const fields = {
        secretSealed: sealSecret(keys.seal, secret, userId),
        createdAt: new Date(nowMs),
        setupSessionId: sessionId,
        lastUsedStep: null,
      };
      // Only a setup not yet on is replaced, in the statement that checks it: a race with its
      // confirmation cannot swap the secret of an app that is on.
      const { count } = await prisma.totpFactor.updateMany({ where: { userId, enabledAt: null }, data: fields });
      if (count === 1) return secret;
      try {
        await prisma.totpFactor.create({ data: { userId, ...fields } });
        return secret;
      } catch {
        return null; // an app is on (or a parallel setup created the row first)
      }
    },

    async totpBeingSetUp(userId, sessionId, nowMs) {
      const row = await prisma.totpFactor.findUnique({ where: { userId } });
      if (!row || row.enabledAt || row.setupSessionId !== sessionId || row.createdAt.getTime() < nowMs - TOTP_SETUP_MS) return null;
      return openSecret(keys.seal, row.secretSealed, userId);
    },

    async confirmTotp(userId, sessionId, code, nowMs) {
      const secret = await this.totpBeingSetUp(userId, sessionId, nowMs);
      const row = secret ? await prisma.totpFactor.findUnique({ where: { userId }, select: { secretSealed: true } }) : null;
      const step = secret ? matchingStep(secret, code, nowMs) : null;
      if (step === null || !row) return false;
      // The first code is spent too: it cannot then sign in within its window.
      const { count } = await prisma.totpFactor.updateMany({
        where: { userId, enabledAt: null, secretSealed: row.secretSealed, setupSessionId: sessionId },
        data: { enabledAt: new Date(nowMs), lastUsedStep: step, setupSessionId: null },
      });
      return count === 1;
    },

    async checkTotp(userId, code, nowMs) {
      const row = await prisma.totpFactor.findUnique({ where: { userId } });
      if (!row?.enabledAt) return { ok: false, reason: "no_factor" };
      const secret = openSecret(keys.seal, row.secretSealed, userId);
      // Sealed under another key (FACTOR_SECRET or NEXTAUTH_SECRET changed): the caller says so loudly.
      if (!secret) return { ok: false, reason: "unreadable" };
      const step = matchingStep(secret, code, nowMs);
      if (step === null) return { ok: false, reason: "wrong" };
      if (row.lastUsedStep !== null && row.lastUsedStep >= step) return { ok: false, reason: "reused" };
      return {
        ok: true,
        // Only a step after the last accepted one moves it: of two uses of one code, one wins.
        spend: async () =>
          (
            await prisma.totpFactor.updateMany({
              where: { userId, enabledAt: { not: null }, OR: [{ lastUsedStep: null }, { lastUsedStep: { lt: step } }] },
              data: { lastUsedStep: step },
            })
          ).count === 1,
      };
    },

    async removeTotp(userId) {
      const { count } = await prisma.totpFactor.deleteMany({ where: { userId } });
      return count > 0;
    },

    async setPasskeyAfterPassword(userId, on) {
      await prisma.user.update({ where: { id: userId }, data: { passkeySecondFactor: on } });
    },

    async replaceRecoveryCodes(userId, nowMs) {
      const codes = newRecoveryCodes();
      await prisma.$transaction([
        // One replacement at a time per account (PostgreSQL's read committed would let two
        // parallel ones each delete nothing of the other's and leave twenty live codes).
        prisma.$queryRaw`SELECT 1 FROM "User" WHERE "id" = ${userId}::uuid FOR UPDATE`,
        prisma.recoveryCode.deleteMany({ where: { userId } }),
        prisma.recoveryCode.createMany({
          data: codes.map((code) => ({
            userId,
            digest: recoveryCodeDigest(keys.recoveryCodes, userId, canonicalRecoveryCode(code)!),
            createdAt: new Date(nowMs),
          })),
        }),
      ]);
      return codes;
    },

    async checkRecoveryCode(userId, typed, nowMs) {
      const canonical = canonicalRecoveryCode(typed);
      if (!canonical) return { ok: false, reason: "wrong" };
      const digest = recoveryCodeDigest(keys.recoveryCodes, userId, canonical);
      const row = await prisma.recoveryCode.findUnique({ where: { userId_digest: { userId, digest } }, select: { usedAt: true } });
      if (!row) return { ok: false, reason: "wrong" };
      if (row.usedAt) return { ok: false, reason: "reused" };
      return {
        ok: true,
        spend: async () =>
          (await prisma.recoveryCode.updateMany({ where: { userId, digest, usedAt: null }, data: { usedAt: new Date(nowMs) } })).count ===
          1,
      };
    },

    recoveryCodesLeft: codesLeft,

    async removeRecoveryCodes(userId) {
      const { count } = await prisma.recoveryCode.deleteMany({ where: { userId } });
      return count;
    },

    async removeAll(userId) {
      const [totp, codes, user] = await prisma.$transaction([
        prisma.totpFactor.deleteMany({ where: { userId } }),
        prisma.recoveryCode.deleteMany({ where: { userId } }),
        prisma.user.updateMany({ where: { id: userId, passkeySecondFactor: true }, data: { passkeySecondFactor: false } }),
      ]);
      return { totp: totp.count, recoveryCodes: codes.count, passkeyAfterPassword: user.count > 0 };
    },
  };
}

/**
 * How a sign-in may be finished at its next step: a second factor, or for a new device of an
 * account under attack, the code mailed to its owner.
 */
export type SecondStepMethod = "totp" | "passkey" | "recovery_code" | "email_code";

/** What the page offers at the second step: the app, a passkey where the account has one, and the codes left. */
export function secondStepMethods(factors: FactorSummary): SecondStepMethod[] {
  return [
    ...(factors.totp ? (["totp"] as const) : []),
    ...(factors.passkeys > 0 ? (["passkey"] as const) : []),
    ...(factors.recoveryCodesLeft > 0 ? (["recovery_code"] as const) : []),
  ];
}

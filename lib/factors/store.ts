import type { PrismaClient } from "@/lib/generated/prisma/client";
import type { SecondStepMethod } from "@/lib/auth/admission";
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

export type CodeCheck = { ok: true } | { ok: false; reason: "wrong" | "reused" | "no_factor" };

/**
 * The second factors' tables (TotpFactor, RecoveryCode, and User.passkeySecondFactor) and
 * nothing else: when a code is asked for and what a failure costs are the second step's
 * (lib/factors/second-step.ts). Every "good once" is a compare-and-set in one statement, so two
 * parallel uses of one code cannot both pass, on any number of instances.
 */
export interface Factors {
  summary(userId: string): Promise<FactorSummary>;
  /** A new authenticator-app secret being set up (replacing one not yet confirmed); the secret, to show. */
  beginTotp(userId: string, nowMs: number): Promise<Uint8Array>;
  /** The secret of an app being set up (not yet on), to show again; null when there is none. */
  totpBeingSetUp(userId: string): Promise<Uint8Array | null>;
  /** Turns the app on with its first code, once; false for a wrong code or nothing being set up. */
  confirmTotp(userId: string, code: string, nowMs: number): Promise<boolean>;
  /** A code of the app that is on, accepted once. */
  useTotp(userId: string, code: string, nowMs: number): Promise<CodeCheck>;
  removeTotp(userId: string): Promise<boolean>;
  setPasskeyAfterPassword(userId: string, on: boolean): Promise<void>;
  /** Ten new codes replacing every old one (used or not); the codes, to show once. */
  replaceRecoveryCodes(userId: string, nowMs: number): Promise<string[]>;
  useRecoveryCode(userId: string, typed: string, nowMs: number): Promise<CodeCheck & { left?: number }>;
  removeRecoveryCodes(userId: string): Promise<number>;
  /** The operator's last resort: every factor and code of the account gone; how many of each. */
  removeAll(userId: string): Promise<{ totp: number; recoveryCodes: number; passkeyAfterPassword: boolean }>;
}

export function prismaFactors(prisma: PrismaClient, keys: { seal: SealKey; recoveryCodes: string }): Factors {
  const codesLeft = (userId: string) => prisma.recoveryCode.count({ where: { userId, usedAt: null } });

  return {
    async summary(userId) {
      const [user, totp, passkeys, recoveryCodesLeft] = await Promise.all([
        prisma.user.findUnique({ where: { id: userId }, select: { passkeySecondFactor: true } }),
        prisma.totpFactor.findUnique({ where: { userId }, select: { enabledAt: true } }),
        prisma.passkey.count({ where: { userId } }),
        codesLeft(userId),
      ]);
      const totpOn = totp?.enabledAt != null;
      // The owner's choice holds even with no passkey left (a reset that took every passkey must not
      // turn the second step off: ASVS 5.0 6.4.3); the step is then a recovery code.
      const passkeyAfterPassword = user?.passkeySecondFactor ?? false;
      return { totp: totpOn, passkeyAfterPassword, passkeys, recoveryCodesLeft, due: totpOn || passkeyAfterPassword };
    },

    async beginTotp(userId, nowMs) {
      const secret = newTotpSecret();
      const secretSealed = sealSecret(keys.seal, secret, userId);
      // An app already on is replaced only by removing it first: setting up never turns a factor off.
      const existing = await prisma.totpFactor.findUnique({ where: { userId }, select: { enabledAt: true } });
      if (existing?.enabledAt) throw new Error("an authenticator app is already on");
      await prisma.totpFactor.upsert({
        where: { userId },
        create: { userId, secretSealed, createdAt: new Date(nowMs) },
        update: { secretSealed, createdAt: new Date(nowMs), lastUsedStep: null },
      });
      return secret;
    },

    async totpBeingSetUp(userId) {
      const row = await prisma.totpFactor.findUnique({ where: { userId } });
      if (!row || row.enabledAt) return null;
      return openSecret(keys.seal, row.secretSealed, userId);
    },

    async confirmTotp(userId, code, nowMs) {
      const row = await prisma.totpFactor.findUnique({ where: { userId } });
      if (!row || row.enabledAt) return false;
      const secret = openSecret(keys.seal, row.secretSealed, userId);
      const step = secret ? matchingStep(secret, code, nowMs) : null;
      if (step === null) return false;
      // The first code is spent too: it cannot then sign in within its window.
      const { count } = await prisma.totpFactor.updateMany({
        where: { userId, enabledAt: null, secretSealed: row.secretSealed },
        data: { enabledAt: new Date(nowMs), lastUsedStep: step },
      });
      return count === 1;
    },

    async useTotp(userId, code, nowMs) {
      const row = await prisma.totpFactor.findUnique({ where: { userId } });
      if (!row?.enabledAt) return { ok: false, reason: "no_factor" };
      const secret = openSecret(keys.seal, row.secretSealed, userId);
      const step = secret ? matchingStep(secret, code, nowMs) : null;
      if (step === null) return { ok: false, reason: "wrong" };
      // Only a step after the last accepted one moves it: of two uses of one code, one wins.
      const { count } = await prisma.totpFactor.updateMany({
        where: { userId, enabledAt: { not: null }, OR: [{ lastUsedStep: null }, { lastUsedStep: { lt: step } }] },
        data: { lastUsedStep: step },
      });
      return count === 1 ? { ok: true } : { ok: false, reason: "reused" };
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

    async useRecoveryCode(userId, typed, nowMs) {
      const canonical = canonicalRecoveryCode(typed);
      if (!canonical) return { ok: false, reason: "wrong" };
      const digest = recoveryCodeDigest(keys.recoveryCodes, userId, canonical);
      const { count } = await prisma.recoveryCode.updateMany({
        where: { userId, digest, usedAt: null },
        data: { usedAt: new Date(nowMs) },
      });
      if (count === 1) return { ok: true, left: await codesLeft(userId) };
      const spent = await prisma.recoveryCode.count({ where: { userId, digest } });
      return { ok: false, reason: spent > 0 ? "reused" : "wrong" };
    },

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

/** What the page offers at the second step: the app, a passkey where the account has one, and the codes left. */
export function secondStepMethods(factors: FactorSummary): SecondStepMethod[] {
  return [
    ...(factors.totp ? (["totp"] as const) : []),
    ...(factors.passkeys > 0 ? (["passkey"] as const) : []),
    ...(factors.recoveryCodesLeft > 0 ? (["recovery_code"] as const) : []),
  ];
}

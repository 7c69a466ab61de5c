import { randomBytes } from "node:crypto";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { tokenDigest } from "@/lib/tokens/opaque-token";

export type PendingPurpose = "sign_in" | "reauthenticate";
export type PendingChannel = "browser" | "api";
/**
 * `mailbox`: a new browser at an address whose password checks for new devices are spent proves
 * the mailbox first (a mailed code, or a stand-in with none); its password is checked after.
 */
export type PendingStep = "second_factor" | "device_confirmation" | "mailbox";
/** The steps a mailed code answers. */
export const MAILED_CODE_STEPS: readonly PendingStep[] = ["device_confirmation", "mailbox"];

type PendingFields = {
  id: string;
  purpose: PendingPurpose;
  channel: PendingChannel;
  sessionId: string;
  deviceId: string | null;
  credentialGeneration: number;
  route: string;
  browser: string | null;
  address: string;
  attempts: number;
  expiresAtMs: number;
};

/**
 * What a right password left for the next step: who, for what, and what its admission chose. A
 * device confirmation may be a stand-in (no user, no code): a wrong password's answer, shaped and
 * counted like a right one's, that nothing finishes.
 */
export type PendingSignIn = PendingFields &
  (
    | { step: "second_factor"; userId: string }
    | {
        step: "device_confirmation" | "mailbox";
        userId: string | null;
        codeDigest: string | null;
        usernameKey: string | null;
        /** The address typed, sealed (lib/factors/device-confirmation.ts); null on rows from before it was kept. */
        sealedEmail: string | null;
      }
  );

/** A pending sign-in lives this long: enough to open an authenticator app, not to wander off. */
export const PENDING_SIGN_IN_MS = 5 * 60_000;
/** A device confirmation's code lives longer: it has to arrive by mail first. */
export const DEVICE_CONFIRMATION_MS = 10 * 60_000;
const LIFETIME_MS: Record<PendingStep, number> = {
  second_factor: PENDING_SIGN_IN_MS,
  device_confirmation: DEVICE_CONFIRMATION_MS,
  mailbox: DEVICE_CONFIRMATION_MS,
};
/**
 * When a mailed code's pending sign-in was opened (its code is that moment's window's): read from
 * the row alike for a stand-in and a right password's.
 */
export function mailedCodeOpenedAtMs(pending: { expiresAtMs: number }): number {
  return pending.expiresAtMs - DEVICE_CONFIRMATION_MS;
}
/** Tries one pending sign-in takes (codes, recovery codes and passkey answers alike); then sign in again. */
export const PENDING_SIGN_IN_TRIES = 5;

export type PendingTry = { ok: true; pending: PendingSignIn } | { ok: false; reason: "unknown" | "expired" | "used" | "tries" };

/**
 * The PendingSignIn table and nothing else. A pending sign-in is found only by the digest of its
 * 256-bit token (held by the browser's HttpOnly cookie or the API client that passed the
 * password), counts each try before it is checked, and is spent once by compare-and-set.
 * Rows past their end are deleted by the retention pass (lib/retention).
 */
export interface PendingSignIns {
  open(
    fields: DistributiveOmit<PendingSignIn, "id" | "attempts" | "expiresAtMs"> & { nowMs: number },
  ): Promise<{ token: string; expiresAtMs: number }>;
  /** A live second-factor pending sign-in of this channel, read without counting a try (to offer its passkeys). */
  peek(token: string, channel: PendingChannel, nowMs: number): Promise<{ id: string; userId: string } | null>;
  /**
   * Counts one try of a live pending sign-in of this channel and one of these steps, atomically,
   * before its answer is checked.
   */
  try(token: string, channel: PendingChannel, steps: readonly PendingStep[], nowMs: number): Promise<PendingTry>;
  /** `try` without counting one: for what guesses nothing ("Resend code"), answered as a try is when it finds none. */
  live(token: string, channel: PendingChannel, steps: readonly PendingStep[], nowMs: number): Promise<PendingTry>;
  /** Spends it; true for exactly one caller. */
  spend(id: string, nowMs: number): Promise<boolean>;
  /** Ends every pending sign-in of the account (a factor removed, a password reset). */
  endAll(userId: string, nowMs: number): Promise<number>;
}

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

type Row = Omit<PendingFields, "purpose" | "channel" | "expiresAtMs"> & {
  purpose: string;
  channel: string;
  step: string;
  userId: string | null;
  codeDigest: string | null;
  usernameKey: string | null;
  sealedEmail: string | null;
  expiresAt: Date;
};

/** A row as its step's type; a second-factor row always has its user (a stand-in is never one). */
function pendingOf(row: Row): PendingSignIn | null {
  const fields: PendingFields = {
    id: row.id,
    purpose: row.purpose as PendingPurpose,
    channel: row.channel as PendingChannel,
    sessionId: row.sessionId,
    deviceId: row.deviceId,
    credentialGeneration: row.credentialGeneration,
    route: row.route,
    browser: row.browser,
    address: row.address,
    attempts: row.attempts,
    expiresAtMs: row.expiresAt.getTime(),
  };
  if (row.step === "device_confirmation" || row.step === "mailbox") {
    const { userId, codeDigest, usernameKey, sealedEmail } = row;
    return { ...fields, step: row.step, userId, codeDigest, usernameKey, sealedEmail };
  }
  if (row.step === "second_factor" && row.userId !== null) return { ...fields, step: "second_factor", userId: row.userId };
  return null;
}

export function prismaPendingSignIns(prisma: PrismaClient): PendingSignIns {
  /** A live pending sign-in of this channel and one of these steps, its tries counted by `count`; else why none. */
  async function find(
    token: string,
    channel: PendingChannel,
    steps: readonly PendingStep[],
    nowMs: number,
    count: 0 | 1,
  ): Promise<PendingTry> {
    if (!TOKEN_PATTERN.test(token)) return { ok: false, reason: "unknown" };
    const digest = tokenDigest(token);
    // The count (none for `live`) moves first, in the statement that checks it is live: parallel
    // tries each take one.
    const rows = await prisma.pendingSignIn.updateManyAndReturn({
      where: {
        digest,
        channel,
        step: { in: [...steps] },
        usedAt: null,
        expiresAt: { gt: new Date(nowMs) },
        attempts: { lt: PENDING_SIGN_IN_TRIES },
      },
      data: { attempts: { increment: count } },
    });
    const pending = rows[0] ? pendingOf(rows[0]) : null;
    if (pending) return { ok: true, pending };
    const dead = await prisma.pendingSignIn.findUnique({
      where: { digest },
      select: { channel: true, step: true, usedAt: true, expiresAt: true },
    });
    if (!dead || dead.channel !== channel || !steps.includes(dead.step as PendingStep)) return { ok: false, reason: "unknown" };
    if (dead.usedAt) return { ok: false, reason: "used" };
    if (dead.expiresAt.getTime() <= nowMs) return { ok: false, reason: "expired" };
    return { ok: false, reason: "tries" };
  }

  return {
    async open({ nowMs, ...fields }) {
      const token = randomBytes(32).toString("base64url");
      const expiresAtMs = nowMs + LIFETIME_MS[fields.step];
      await prisma.pendingSignIn.create({
        data: { ...fields, digest: tokenDigest(token), createdAt: new Date(nowMs), expiresAt: new Date(expiresAtMs) },
      });
      return { token, expiresAtMs };
    },

    async peek(token, channel, nowMs) {
      if (!TOKEN_PATTERN.test(token)) return null;
      const row = await prisma.pendingSignIn.findFirst({
        where: {
          digest: tokenDigest(token),
          channel,
          usedAt: null,
          expiresAt: { gt: new Date(nowMs) },
          attempts: { lt: PENDING_SIGN_IN_TRIES },
          step: "second_factor",
        },
        select: { id: true, userId: true },
      });
      return row?.userId ? { id: row.id, userId: row.userId } : null;
    },

    try: (token, channel, steps, nowMs) => find(token, channel, steps, nowMs, 1),
    live: (token, channel, steps, nowMs) => find(token, channel, steps, nowMs, 0),

    async spend(id, nowMs) {
      const { count } = await prisma.pendingSignIn.updateMany({
        where: { id, usedAt: null, expiresAt: { gt: new Date(nowMs) } },
        data: { usedAt: new Date(nowMs) },
      });
      return count === 1;
    },

    async endAll(userId, nowMs) {
      const { count } = await prisma.pendingSignIn.updateMany({ where: { userId, usedAt: null }, data: { usedAt: new Date(nowMs) } });
      return count;
    },
  };
}

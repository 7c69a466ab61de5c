import type { PrismaClient } from "@/lib/generated/prisma/client";
import { uuidSchema } from "@/lib/tokens/opaque-token";

// The id column is a uuid: anything else is no passkey, and must not reach the query (which would fail).
const isId = (id: string) => uuidSchema.safeParse(id).success;

export type PasskeyRecord = {
  id: string;
  userId: string;
  /** The account's credential generation as the passkey was found: what a sign-in with it holds to. */
  credentialGeneration: number;
  credentialId: string;
  publicKey: Uint8Array;
  signCount: number;
  transports: string[];
};

/** What a verified registration yields: the credential as the authenticator made it. */
export type NewPasskey = {
  credentialId: string;
  publicKey: Uint8Array;
  signCount: number;
  transports: string[];
  deviceType: string;
  backedUp: boolean;
};

export type PasskeyView = { id: string; name: string; createdAt: Date; lastUsedAt: Date | null; synced: boolean };

/**
 * The Passkey table and nothing else (but the account's credential generation, read with a passkey
 * found): what a passkey is for and when it may be used are the routes' and passkey-rules.ts's. Every write is scoped by userId, so no one renames or removes another's.
 */
export interface Passkeys {
  add(fields: NewPasskey & { userId: string; name: string; nowMs: number }): Promise<{ id: string } | { taken: true }>;
  find(credentialId: string): Promise<PasskeyRecord | null>;
  list(userId: string): Promise<PasskeyView[]>;
  /** The credential ids of the user's passkeys (so the browser does not register one twice). */
  credentialIds(userId: string): Promise<{ credentialId: string; transports: string[] }[]>;
  /**
   * Records a use: the new count only if the stored one is still what the check read, so two
   * assertions racing with one count cannot both be accepted. False when another use came first.
   */
  recordUse(id: string, readCount: number, newCount: number, nowMs: number): Promise<boolean>;
  rename(userId: string, id: string, name: string): Promise<boolean>;
  /** Removes every passkey of the user; how many. */
  removeAll(userId: string): Promise<number>;
  /**
   * Removes one of the user's passkeys; its name when it existed. `keepLastCredential`: not the
   * last passkey of an account with no password (the owner would have no way in but the mailbox);
   * "last_credential" then. The operator's removal may take it.
   */
  remove(userId: string, id: string, options?: { keepLastCredential?: boolean }): Promise<string | null | "last_credential">;
}

export function prismaPasskeys(prisma: PrismaClient): Passkeys {
  return {
    async add({ nowMs, signCount, ...fields }) {
      const [row] = await prisma.passkey.createManyAndReturn({
        data: {
          ...fields,
          publicKey: Buffer.from(fields.publicKey).toString("base64url"),
          signCount: BigInt(signCount),
          createdAt: new Date(nowMs),
        },
        skipDuplicates: true,
        select: { id: true },
      });
      return row ?? { taken: true };
    },
    async find(credentialId) {
      const row = await prisma.passkey.findUnique({
        where: { credentialId },
        select: {
          id: true,
          userId: true,
          credentialId: true,
          publicKey: true,
          signCount: true,
          transports: true,
          user: { select: { credentialGeneration: true } },
        },
      });
      if (!row) return null;
      const { user, ...passkey } = row;
      return {
        ...passkey,
        credentialGeneration: user.credentialGeneration,
        publicKey: new Uint8Array(Buffer.from(row.publicKey, "base64url")),
        signCount: Number(row.signCount),
      };
    },
    async list(userId) {
      const rows = await prisma.passkey.findMany({
        where: { userId },
        orderBy: { createdAt: "asc" },
        select: { id: true, name: true, createdAt: true, lastUsedAt: true, deviceType: true },
      });
      return rows.map(({ deviceType, ...row }) => ({ ...row, synced: deviceType === "multiDevice" }));
    },
    credentialIds: (userId) => prisma.passkey.findMany({ where: { userId }, select: { credentialId: true, transports: true } }),
    async recordUse(id, readCount, newCount, nowMs) {
      if (!isId(id)) return false;
      const { count } = await prisma.passkey.updateMany({
        where: { id, signCount: BigInt(readCount) },
        data: { signCount: BigInt(newCount), lastUsedAt: new Date(nowMs) },
      });
      return count === 1;
    },
    async rename(userId, id, name) {
      if (!isId(id)) return false;
      const { count } = await prisma.passkey.updateMany({ where: { id, userId }, data: { name } });
      return count === 1;
    },
    removeAll: async (userId) => (await prisma.passkey.deleteMany({ where: { userId } })).count,
    async remove(userId, id, options = {}) {
      if (!isId(id)) return null;
      return prisma.$transaction(async (tx) => {
        // The account's row first, locked: two removals racing for the last two passkeys of an
        // account with no password are decided one after the other, so one of them is kept.
        const owner = await tx.$queryRaw<{ hasPassword: boolean }[]>`
          SELECT "passwordHash" IS NOT NULL AS "hasPassword" FROM "User" WHERE "id" = ${userId}::uuid FOR UPDATE`;
        const row = await tx.passkey.findFirst({ where: { id, userId }, select: { name: true } });
        if (!row || owner.length === 0) return null;
        if (options.keepLastCredential && !owner[0]!.hasPassword && (await tx.passkey.count({ where: { userId } })) <= 1)
          return "last_credential" as const;
        const { count } = await tx.passkey.deleteMany({ where: { id, userId } });
        return count === 1 ? row.name : null;
      });
    },
  };
}

import { randomBytes } from "node:crypto";
import { msToUtc, utcToMs, type Sql } from "@/lib/db/sql";
import { writeTogether, type Writes } from "@/lib/db/one-statement";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { SESSION_ID_PATTERN, type SessionRecord } from "./session-rules";

export type BrowserSessionView = { id: string; browser: string; address: string; createdAt: Date; lastSeenAt: Date };

/** 128 random bits, base64url (SESSION_ID_PATTERN). */
export function newSessionId(): string {
  return randomBytes(16).toString("base64url");
}

/**
 * The BrowserSession table and nothing else. Decisions (live or not, touch or not) are in
 * session-rules.ts; every write that ends sessions is scoped by userId, so no one ends another's.
 */
export interface BrowserSessions {
  /** `id`: one chosen earlier (a sign-in's admission names its session before the check); else a new one. */
  create(fields: NewSession): Promise<{ id: string }>;
  /**
   * `create`'s writes, for a caller that writes them with other tables' in one statement
   * (lib/db/one-statement.ts): the session exists once they are written.
   */
  creating(fields: NewSession): { writes: Writes; id: string };
  /** The record of a well-formed id, with its user's credential generation, in one read (anything else is unknown without a lookup). */
  find(id: string): Promise<SessionRecord | null>;
  /** Sets lastSeenAt unless a concurrent request already moved it past `sinceMs`. */
  touch(id: string, nowMs: number, sinceMs: number): Promise<void>;
  /** Ends one of the user's sessions; true if it was live until now. */
  revoke(userId: string, id: string, nowMs: number): Promise<boolean>;
  /** Ends every live session of the user but `keepId`; how many it ended. */
  revokeAllExcept(userId: string, keepId: string | null, nowMs: number): Promise<number>;
  /** When this session of the user last proved who it is (its sign-in, or a later re-authentication); null if unknown. */
  authenticatedAt(userId: string, id: string): Promise<number | null>;
  /** What a renewal of this live session of the user keeps (its last proof and its absolute end); null if unknown. */
  renewable(userId: string, id: string): Promise<SessionRenewal | null>;
  /** Records a re-authentication (the password or a passkey asked again) of one of the user's live sessions. */
  reauthenticated(userId: string, id: string, nowMs: number): Promise<boolean>;
  /**
   * Raises the user's credential generation and carries `keepId` (if live under the old one)
   * over to the new one, in one transaction: every session, refresh family and access token made
   * under the old generation is dead, including one a sign-in in flight writes afterwards. The
   * new generation, or null if the user is gone.
   */
  raiseGeneration(userId: string, keepId: string | null): Promise<number | null>;
  /** The user's sessions that are neither revoked, past their end nor seen before `seenSinceMs`, newest first. */
  listLive(userId: string, nowMs: number, seenSinceMs: number): Promise<BrowserSessionView[]>;
}

export type NewSession = {
  id?: string;
  userId: string;
  credentialGeneration: number;
  browser: string;
  address: string;
  nowMs: number;
  expiresAtMs: number;
  /** When the browser last proved who it is: now for a sign-in; the old session's for a renewal. */
  authenticatedAtMs?: number;
};

/**
 * A renewed session (a new id after a password change) is as fresh as the one it replaces and
 * ends when it would have: renewing proves nothing new, and must not restart the absolute lifetime.
 */
export type SessionRenewal = { authenticatedAtMs: number; expiresAtMs: number };

type SessionRow = {
  id: string;
  userId: string;
  lastSeenAtMs: number;
  expiresAtMs: number;
  revokedAtMs: number | null;
  credentialGeneration: number;
  userCredentialGeneration: number | null;
  passwordBreached: boolean | null;
};

// Dead rows are kept a while (the account page could show them) and then removed by create().
const KEEP_DEAD_MS = 30 * 86_400_000;

/**
 * `sql` serves what every sign-in and every signed-in request does (create, find, touch; lib/db/sql.ts);
 * the account page's changes go through Prisma.
 */
export function prismaBrowserSessions(prisma: PrismaClient, sql: Sql): BrowserSessions {
  const creating: BrowserSessions["creating"] = ({
    id = newSessionId(),
    userId,
    credentialGeneration,
    browser,
    address,
    nowMs,
    expiresAtMs,
    authenticatedAtMs = nowMs,
  }) => {
    // The new session, and this table cleaning up after itself, one user at a time (sessions
    // long over are dropped; the new one is not, being neither).
    const writes: Writes = (param, when) => {
      const user = `${param(userId)}::uuid`;
      const now = msToUtc(param(nowMs));
      const deadBefore = msToUtc(param(nowMs - KEEP_DEAD_MS));
      return [
        `INSERT INTO "BrowserSession" ("id", "userId", "credentialGeneration", "browser", "address", "createdAt", "lastSeenAt", "authenticatedAt", "expiresAt")
         SELECT ${param(id)}, ${user}, ${param(credentialGeneration)}, ${param(browser)}, ${param(address)}, ${now}, ${now}, ${msToUtc(param(authenticatedAtMs))}, ${msToUtc(param(expiresAtMs))}
         WHERE ${when}`,
        `DELETE FROM "BrowserSession"
         WHERE "userId" = ${user} AND ("expiresAt" < ${deadBefore} OR "revokedAt" < ${deadBefore} OR "lastSeenAt" < ${deadBefore}) AND ${when}`,
      ];
    };
    return { writes, id };
  };

  return {
    async authenticatedAt(userId, id) {
      const row = await prisma.browserSession.findFirst({ where: { id, userId, revokedAt: null }, select: { authenticatedAt: true } });
      return row?.authenticatedAt.getTime() ?? null;
    },
    async renewable(userId, id) {
      const row = await prisma.browserSession.findFirst({
        where: { id, userId, revokedAt: null },
        select: { authenticatedAt: true, expiresAt: true },
      });
      return row ? { authenticatedAtMs: row.authenticatedAt.getTime(), expiresAtMs: row.expiresAt.getTime() } : null;
    },
    async reauthenticated(userId, id, nowMs) {
      const now = new Date(nowMs);
      const { count } = await prisma.browserSession.updateMany({
        where: { id, userId, revokedAt: null, expiresAt: { gt: now } },
        data: { authenticatedAt: now },
      });
      return count === 1;
    },
    creating,

    async create(fields) {
      const { writes, id } = creating(fields);
      await writeTogether(sql, writes);
      return { id };
    },

    async find(id) {
      if (!SESSION_ID_PATTERN.test(id)) return null;
      // One round trip: the session, its user's current generation (null when the user is gone) and breached mark.
      const [row] = await sql.rows<SessionRow>(
        `SELECT s."id", s."userId"::text AS "userId", ${utcToMs(`s."lastSeenAt"`)} AS "lastSeenAtMs", ${utcToMs(`s."expiresAt"`)} AS "expiresAtMs",
           ${utcToMs(`s."revokedAt"`)} AS "revokedAtMs", s."credentialGeneration",
           u."credentialGeneration" AS "userCredentialGeneration", u."passwordBreachedAt" IS NOT NULL AS "passwordBreached"
         FROM "BrowserSession" s LEFT JOIN "User" u ON u."id" = s."userId"
         WHERE s."id" = $1`,
        [id],
      );
      if (!row) return null;
      return {
        id: row.id,
        userId: row.userId,
        lastSeenAtMs: row.lastSeenAtMs,
        expiresAtMs: row.expiresAtMs,
        revokedAtMs: row.revokedAtMs,
        credentialGeneration: row.credentialGeneration,
        userCredentialGeneration: row.userCredentialGeneration,
        passwordBreached: row.passwordBreached === true,
      };
    },

    async touch(id, nowMs, sinceMs) {
      await sql.run(
        `UPDATE "BrowserSession" SET "lastSeenAt" = ${msToUtc("$1")} WHERE "id" = $2 AND "revokedAt" IS NULL AND "lastSeenAt" < ${msToUtc("$3")}`,
        [nowMs, id, sinceMs],
      );
    },

    async revoke(userId, id, nowMs) {
      if (!SESSION_ID_PATTERN.test(id)) return false;
      const now = new Date(nowMs);
      const { count } = await prisma.browserSession.updateMany({
        where: { id, userId, revokedAt: null, expiresAt: { gt: now } },
        data: { revokedAt: now },
      });
      return count === 1;
    },

    async revokeAllExcept(userId, keepId, nowMs) {
      const now = new Date(nowMs);
      const { count } = await prisma.browserSession.updateMany({
        where: { userId, revokedAt: null, expiresAt: { gt: now }, ...(keepId ? { id: { not: keepId } } : {}) },
        data: { revokedAt: now },
      });
      return count;
    },

    async raiseGeneration(userId, keepId) {
      return prisma.$transaction(async (tx) => {
        const raised = await tx.user.updateMany({ where: { id: userId }, data: { credentialGeneration: { increment: 1 } } });
        if (raised.count === 0) return null;
        const { credentialGeneration } = await tx.user.findUniqueOrThrow({ where: { id: userId }, select: { credentialGeneration: true } });
        // Only a session that was live under the generation just left keeps its place.
        if (keepId && SESSION_ID_PATTERN.test(keepId))
          await tx.browserSession.updateMany({
            where: { id: keepId, userId, revokedAt: null, credentialGeneration: credentialGeneration - 1 },
            data: { credentialGeneration },
          });
        return credentialGeneration;
      });
    },

    async listLive(userId, nowMs, seenSinceMs) {
      const user = await prisma.user.findUnique({ where: { id: userId }, select: { credentialGeneration: true } });
      if (!user) return [];
      const rows = await prisma.browserSession.findMany({
        where: {
          userId,
          revokedAt: null,
          expiresAt: { gt: new Date(nowMs) },
          lastSeenAt: { gt: new Date(seenSinceMs) },
          credentialGeneration: { gte: user.credentialGeneration },
        },
        orderBy: { lastSeenAt: "desc" },
        take: 100,
        select: { id: true, browser: true, address: true, createdAt: true, lastSeenAt: true },
      });
      return rows;
    },
  };
}

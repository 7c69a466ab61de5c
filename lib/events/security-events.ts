import { randomUUID } from "node:crypto";
import ipaddr from "ipaddr.js";
import { msToUtc, type Sql } from "@/lib/db/sql";
import { writeTogether, type Writes } from "@/lib/db/one-statement";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import type { ClientAddress } from "@/lib/http/client-address";
import type { LockoutState } from "@/lib/lockout/lockout-rules";

/** What the owner did to their own sessions and password from the account page. */
export type AccountChangeKind =
  | "browser_session_revoked"
  | "api_session_revoked"
  | "signed_out_everywhere_else"
  | "password_changed"
  | "admin_unlocked"
  | "admin_sessions_revoked"
  | "email_verified"
  | "password_reset"
  | "unlock_link_used"
  | "refresh_token_reused"
  | "passkey_added"
  | "passkey_removed"
  | "passkey_counter_regressed"
  | "admin_passkey_removed"
  | "passkey_renamed"
  | "passkeys_removed_by_reset"
  | "reauthenticated"
  | "totp_added"
  | "totp_removed"
  | "passkey_second_factor_on"
  | "passkey_second_factor_off"
  | "recovery_codes_replaced"
  | "recovery_code_used"
  | "second_step_due"
  | "second_step_failed"
  | "device_confirmation_due"
  | "device_confirmation_failed"
  | "admin_factors_removed"
  | "password_found_breached"
  | "device_forgotten"
  | "data_exported";

export type SecurityEventKind =
  | "sign_in_failed"
  | "sign_in_unconfirmed"
  | "sign_in_succeeded"
  | "locked"
  | "untrusted_paused"
  | "refresh_family_created"
  | AccountChangeKind;

export type SecurityEventView = { kind: SecurityEventKind; address: string; browser: string | null; sessionId: string | null; at: Date };

/** Where an event came from: the client's browser family and its browser session, when known. */
export type EventOrigin = { browser?: string | undefined; sessionId?: string | null | undefined };

/** IPv4 to its /24, IPv6 to its /48: a user recognises the network; nobody gets a precise trail. */
export function truncateAddress(address: string): string {
  if (!ipaddr.isValid(address)) return "unknown";
  const parsed = ipaddr.process(address);
  if (parsed.kind() === "ipv4") {
    const [a, b, c] = (parsed as ipaddr.IPv4).octets;
    return `${a}.${b}.${c}.x`;
  }
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 3).map((part) => part.toString(16));
  return `${parts.join(":")}::/48`;
}

export type SecurityEvents = {
  /**
   * A failed sign-in for `email`: recorded only when such an account exists (nobody else could
   * read it). `paused`: this failure reached NIST's cap, so new devices are now refused. `cause`
   * "unconfirmed": the right password before the address was confirmed, which the owner sees as
   * such and which is not one of the "failed attempts" they are warned about (the lockout counts
   * it all the same: a stranger must not be able to tell the two apart).
   */
  signInFailed(
    email: string,
    client: ClientAddress,
    lockout: LockoutState,
    paused?: boolean,
    origin?: EventOrigin,
    cause?: "wrong" | "unconfirmed",
  ): Promise<void>;
  signInSucceeded(userId: string, client: ClientAddress, origin?: EventOrigin): Promise<void>;
  /**
   * `signInSucceeded`'s write, for a caller that writes it with other tables' in one statement
   * (lib/db/one-statement.ts): there a failure fails them all, where `signInSucceeded` alone only
   * reports it.
   */
  signInSucceededWrites(userId: string, client: ClientAddress, origin?: EventOrigin): Writes;
  refreshFamilyCreated(userId: string, client: ClientAddress, origin?: EventOrigin): Promise<void>;
  accountChanged(userId: string, kind: AccountChangeKind, client: ClientAddress, origin?: EventOrigin): Promise<void>;
  recent(userId: string, limit?: number): Promise<SecurityEventView[]>;
  /** Failed sign-ins between the previous successful sign-in and the latest one. */
  failuresBeforeLatestSignIn(userId: string): Promise<number>;
};

/** `sql` writes the events and finds a failure's account, on every sign-in (lib/db/sql.ts); the reads go through Prisma. */
export function prismaSecurityEvents(
  prisma: PrismaClient,
  sql: Sql,
  clock: () => number,
  onError: (error: unknown) => void,
): SecurityEvents {
  // One clock (the app's) for every event, so their order is the order they happened in.
  const writes =
    (userId: string, kind: SecurityEventKind, client: ClientAddress, origin: EventOrigin = {}, atMs = clock()): Writes =>
    (param, when) => [
      `INSERT INTO "SecurityEvent" ("id", "userId", "kind", "address", "browser", "sessionId", "createdAt")
       SELECT ${param(randomUUID())}::uuid, ${param(userId)}::uuid, ${param(kind)}, ${param(truncateAddress(client.address))}, ${param(origin.browser ?? null)}, ${param(origin.sessionId ?? null)}, ${msToUtc(param(atMs))}
       WHERE ${when}`,
    ];

  async function record(userId: string, kind: SecurityEventKind, client: ClientAddress, origin: EventOrigin = {}, atMs = clock()) {
    try {
      await writeTogether(sql, writes(userId, kind, client, origin, atMs));
    } catch (error) {
      // The sign-in itself stands; only the user's view of it is incomplete.
      onError(error);
    }
  }

  return {
    async signInFailed(email, client, lockout, paused = false, origin = {}, cause = "wrong") {
      const [user] = await sql.rows<{ id: string }>(`SELECT "id"::text AS "id" FROM "User" WHERE "email" = $1`, [email]).catch(() => []);
      if (!user) return;
      await record(user.id, cause === "unconfirmed" ? "sign_in_unconfirmed" : "sign_in_failed", client, origin, lockout.lastFailureAtMs);
      // Every failure at or past the threshold sets a (longer) lock: the user should see each,
      // listed just after the failure that caused it.
      if (lockout.lockedUntilMs !== null) await record(user.id, "locked", client, origin, lockout.lastFailureAtMs + 1);
      if (paused) await record(user.id, "untrusted_paused", client, origin, lockout.lastFailureAtMs + 2);
    },
    signInSucceeded: (userId, client, origin) => record(userId, "sign_in_succeeded", client, origin),
    signInSucceededWrites: (userId, client, origin) => writes(userId, "sign_in_succeeded", client, origin),
    refreshFamilyCreated: (userId, client, origin) => record(userId, "refresh_family_created", client, origin),
    accountChanged: (userId, kind, client, origin) => record(userId, kind, client, origin),
    async recent(userId, limit = 20) {
      const rows = await prisma.securityEvent.findMany({ where: { userId }, orderBy: { createdAt: "desc" }, take: limit });
      return rows.map((row) => ({
        kind: row.kind as SecurityEventKind,
        address: row.address,
        browser: row.browser,
        sessionId: row.sessionId,
        at: row.createdAt,
      }));
    },
    async failuresBeforeLatestSignIn(userId) {
      const successes = await prisma.securityEvent.findMany({
        where: { userId, kind: "sign_in_succeeded" },
        orderBy: { createdAt: "desc" },
        take: 2,
        select: { createdAt: true },
      });
      const latest = successes[0];
      if (!latest) return 0;
      return prisma.securityEvent.count({
        where: {
          userId,
          kind: "sign_in_failed",
          createdAt: { lt: latest.createdAt, ...(successes[1] ? { gt: successes[1].createdAt } : {}) },
        },
      });
    },
  };
}

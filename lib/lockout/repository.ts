import { msToUtc, utcToMs, type Sql } from "@/lib/db/sql";
import {
  admitAttempt,
  checkLockout,
  type AttemptDecision,
  type LockoutCheck,
  type LockoutPolicy,
  type LockoutState,
} from "./lockout-rules";

/** An admitted attempt, with when the subject last failed for real (markFailed), which a success does not clear. */
export type AdmittedAttempt =
  (Extract<AttemptDecision, { allowed: true }> & { lastFailedAtMs: number | null }) | Extract<AttemptDecision, { allowed: false }>;

/**
 * A subject's row as a check read it. admitAttempt may start from it instead of reading again: its
 * write still compares, so a row that changed since is read afresh, as in any lost race.
 */
export type LockoutSeen = { readonly usernameKey: string; readonly row: Row | null };

/**
 * Persists lockout state; the decisions stay in lockout-rules.ts. A key is a subject's digest: a
 * username as seen from untrusted clients, or one known device.
 */
export interface LockoutRepository {
  /**
   * `alongside`: a second subject checked in the same statement (a known device's sign-in reads its
   * username's strangers' lock with its own, for the cap its success lifts).
   */
  check(
    usernameKey: string,
    nowMs: number,
    policy: LockoutPolicy,
    alongside?: { usernameKey: string; policy: LockoutPolicy },
  ): Promise<LockoutCheck & { seen: LockoutSeen; alongside?: LockoutCheck }>;
  /**
   * Atomically: refuses while locked, else counts the attempt as a failure (admitAttempt).
   * Concurrent attempts for one username are counted one after another, so none is missed and none slips past a lock.
   * `seen` (the same key's check) saves the first read.
   */
  admitAttempt(usernameKey: string, nowMs: number, policy: LockoutPolicy, seen?: LockoutSeen): Promise<AdmittedAttempt>;
  /** Records that a check from an untrusted client failed, or waited for a mailed code (what "under attack" reads). */
  markFailed(usernameKey: string, nowMs: number): Promise<void>;
  /** Clears the streak and the lock; a row that records a real failure keeps that record. */
  reset(usernameKey: string): Promise<void>;
  /** Forgets the subject altogether, the record of its failures included (a password reset: the old password is dead). */
  forget(usernameKey: string): Promise<void>;
  /** Keys locked at `nowMs` (digests only: the table holds no usernames), longest lock first. */
  listLocked(nowMs: number, limit: number): Promise<{ usernameKey: string; failureCount: number; lockedUntilMs: number }[]>;
}

// Each miss means another attempt on the key was counted meanwhile; password attempts race only
// as many as the hash budget's slots, so this bound is for a runaway, not for a busy key.
const MAX_WRITE_ATTEMPTS = 100;

// Times as ms since the epoch (lib/db/sql.ts): both drivers read them alike.
const COLUMNS = `"failureCount", ${utcToMs(`"lastFailureAt"`)} AS "lastFailureAtMs", ${utcToMs(`"lockedUntil"`)} AS "lockedUntilMs",
  ${utcToMs(`"lastFailedAt"`)} AS "lastFailedAtMs"`;

type Row = { failureCount: number; lastFailureAtMs: number; lockedUntilMs: number | null; lastFailedAtMs: number | null };

function toState(row: Row): LockoutState | null {
  // A placeholder row (earlier versions inserted one before counting) has no failures yet.
  if (row.failureCount === 0) return null;
  return { failureCount: row.failureCount, lastFailureAtMs: row.lastFailureAtMs, lockedUntilMs: row.lockedUntilMs };
}

/** The SignInLockout table, in SQL straight to the driver: every refused guess reads it. */
export function sqlLockoutRepository(sql: Sql): LockoutRepository {
  const read = async (usernameKey: string): Promise<Row | null> =>
    (await sql.rows<Row>(`SELECT ${COLUMNS} FROM "SignInLockout" WHERE "usernameKey" = $1`, [usernameKey]))[0] ?? null;

  const checked = (row: Row | null, nowMs: number, policy: LockoutPolicy) => checkLockout(row ? toState(row) : null, nowMs, policy);

  return {
    async check(usernameKey, nowMs, policy, alongside) {
      if (!alongside) {
        const row = await read(usernameKey);
        return { ...checked(row, nowMs, policy), seen: { usernameKey, row } };
      }
      const rows = await sql.rows<Row & { usernameKey: string }>(
        `SELECT "usernameKey", ${COLUMNS} FROM "SignInLockout" WHERE "usernameKey" IN ($1, $2)`,
        [usernameKey, alongside.usernameKey],
      );
      const rowOf = (key: string): Row | null => rows.find((row) => row.usernameKey === key) ?? null;
      const row = rowOf(usernameKey);
      return {
        ...checked(row, nowMs, policy),
        seen: { usernameKey, row },
        alongside: checked(rowOf(alongside.usernameKey), nowMs, alongside.policy),
      };
    },

    async admitAttempt(usernameKey, nowMs, policy, seen) {
      // Check-and-count as compare-and-set, two statements and no transaction: read the row, let
      // the rule decide in TypeScript, then write only if the row is still what was read (or, with
      // no row, insert only if none appeared). A concurrent attempt that changed it first makes
      // this write miss, and this attempt decides again on the new state: none is missed, none
      // slips past a lock. No transaction holds the embedded database's one connection (or a row
      // lock) while the rule runs. Every miss means another attempt was counted, so this ends.
      for (let attempt = 1; ; attempt++) {
        const fromSeen = attempt === 1 && seen?.usernameKey === usernameKey;
        const row = fromSeen ? seen.row : await read(usernameKey);
        const decision = admitAttempt(row ? toState(row) : null, nowMs, policy);
        // A refusal is never taken from a copy: a success or an unlock since may have cleared it.
        if (!decision.allowed && fromSeen) continue;
        if (!decision.allowed) return decision;
        const next = decision.state;
        // The columns are timestamp(3) and the times whole ms, so the comparison is exact.
        // The write returns lastFailedAt as it is now: the row read may be older than a markFailed.
        const [written] = row
          ? await sql.rows<Pick<Row, "lastFailedAtMs">>(
              `UPDATE "SignInLockout" SET "failureCount" = $1, "lastFailureAt" = ${msToUtc("$2")}, "lockedUntil" = ${msToUtc("$3")}
               WHERE "usernameKey" = $4 AND "failureCount" = $5 AND "lastFailureAt" = ${msToUtc("$6")}
                 AND "lockedUntil" IS NOT DISTINCT FROM ${msToUtc("$7")}
               RETURNING ${utcToMs(`"lastFailedAt"`)} AS "lastFailedAtMs"`,
              [
                next.failureCount,
                next.lastFailureAtMs,
                next.lockedUntilMs,
                usernameKey,
                row.failureCount,
                row.lastFailureAtMs,
                row.lockedUntilMs,
              ],
            )
          : await sql.rows<Pick<Row, "lastFailedAtMs">>(
              `INSERT INTO "SignInLockout" ("usernameKey", "failureCount", "lastFailureAt", "lockedUntil")
               VALUES ($1, $2, ${msToUtc("$3")}, ${msToUtc("$4")}) ON CONFLICT ("usernameKey") DO NOTHING
               RETURNING ${utcToMs(`"lastFailedAt"`)} AS "lastFailedAtMs"`,
              [usernameKey, next.failureCount, next.lastFailureAtMs, next.lockedUntilMs],
            );
        // lastFailedAt is not compared: markFailed may move it meanwhile, and it counts nothing.
        if (written) return { ...decision, lastFailedAtMs: written.lastFailedAtMs };
        // Bounded all the same: past this, the attempt fails (a 503 to the client), never counts wrong.
        if (attempt >= MAX_WRITE_ATTEMPTS) throw new Error(`lockout: ${attempt} concurrent writes to one key in a row`);
      }
    },

    async listLocked(nowMs, limit) {
      return sql.rows<{ usernameKey: string; failureCount: number; lockedUntilMs: number }>(
        `SELECT "usernameKey", "failureCount", ${utcToMs(`"lockedUntil"`)} AS "lockedUntilMs" FROM "SignInLockout"
         WHERE "lockedUntil" > ${msToUtc("$1")} ORDER BY "lockedUntil" DESC LIMIT $2::int`,
        [nowMs, limit],
      );
    },

    async forget(usernameKey) {
      await sql.run(`DELETE FROM "SignInLockout" WHERE "usernameKey" = $1`, [usernameKey]);
    },

    async markFailed(usernameKey, nowMs) {
      await sql.run(`UPDATE "SignInLockout" SET "lastFailedAt" = ${msToUtc("$1")} WHERE "usernameKey" = $2`, [nowMs, usernameKey]);
    },

    async reset(usernameKey) {
      // The row stays (the retention pass removes it once idle): it may hold lastFailedAt.
      await sql.run(`UPDATE "SignInLockout" SET "failureCount" = 0, "lockedUntil" = NULL WHERE "usernameKey" = $1`, [usernameKey]);
    },
  };
}

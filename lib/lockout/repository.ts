import { inSpan } from "@/lib/tracing/spans";
import { usernameCalmInsert } from "@/lib/webhooks/attacks";
import { msToUtc, utcToMs, type Sql } from "@/lib/db/sql";
import {
  admitAttempt,
  checkLockout,
  REMEMBERED_WRONG_PASSWORDS,
  streakLive,
  type AttemptDecision,
  type LockoutCheck,
  type LockoutPolicy,
  type LockoutState,
} from "./lockout-rules";

/**
 * An admitted attempt, with when the subject last failed for real (markFailed), which a success does
 * not clear, and the `alongside` subject's check where the count's statement read it.
 */
export type AdmittedAttempt =
  | (Extract<AttemptDecision, { allowed: true }> & { lastFailedAtMs: number | null; alongside?: LockoutCheck & { seen: LockoutSeen } })
  | Extract<AttemptDecision, { allowed: false }>;

/** A second subject, read in the statement that counts the first (its check only: nothing of it is written). */
export type Alongside = { usernameKey: string; policy: LockoutPolicy };

/**
 * A subject's row as a check read it. admitAttempt may start from it instead of reading again: its
 * write still compares, so a row that changed since is read afresh, as in any lost race.
 */
export type LockoutSeen = { readonly usernameKey: string; readonly row: Row | null };

/**
 * What a check that ended without a session leaves: the fingerprint of its password among the
 * subject's last wrong ones (lib/lockout/wrong-passwords.ts), and whether it marks the username
 * under attack (an untrusted client's failure does; a known device's own lock has no such mark).
 */
export type FailureMark = { underAttack: boolean; fingerprint?: string };

/**
 * Persists lockout state; the decisions stay in lockout-rules.ts. A key is a subject's digest: a
 * username as seen from untrusted clients, or one known device.
 */
export interface LockoutRepository {
  check(usernameKey: string, nowMs: number, policy: LockoutPolicy): Promise<LockoutCheck & { seen: LockoutSeen }>;
  /**
   * Atomically: refuses while locked, else counts the attempt as a failure (admitAttempt).
   * Concurrent attempts for one username are counted one after another, so none is missed and none slips past a lock.
   * `seen` (the same key's check, or a presumption its compare-and-set corrects) saves the first read.
   * `alongside` is read in the statement of a first write from `seen` (a known device's count reads its
   * username's strangers' lock, whose cap the owner's success lifts); after a missed write it is not.
   * `fingerprint`: the password's, for this client; one the streak remembers is admitted uncounted.
   */
  admitAttempt(
    usernameKey: string,
    nowMs: number,
    policy: LockoutPolicy,
    seen?: LockoutSeen,
    alongside?: Alongside,
    fingerprint?: string,
  ): Promise<AdmittedAttempt>;
  /**
   * Records that a check failed, or waited for a mailed code: "under attack" (what the device
   * confirmation reads) and the password's fingerprint, newest first, the last few kept. One
   * statement whatever it records, so its time tells nothing.
   */
  markFailed(usernameKey: string, nowMs: number, mark?: FailureMark): Promise<void>;
  /**
   * Marks the username "under attack" whatever its row holds, creating one with no failures counted
   * (the owner said a sign-in was not theirs, or undid a change of address): its new devices confirm by email.
   */
  markUnderAttack(usernameKey: string, nowMs: number): Promise<void>;
  /** Ends "under attack" (the owner proved the mailbox); the streak and the lock stay. */
  clearUnderAttack(usernameKey: string): Promise<void>;
  /** Forgets the wrong passwords' fingerprints (a password change: what was wrong may be right now). */
  forgetWrongPasswords(usernameKey: string): Promise<void>;
  /** Clears the streak, its fingerprints and the lock; a row that records a real failure keeps that record. */
  reset(usernameKey: string): Promise<void>;
  /** `reset`, only while the row is as `seen` read it: a streak counted since stays. */
  resetAsSeen(seen: LockoutSeen): Promise<void>;
  /** Forgets the subject altogether, the record of its failures included (a password reset: the old password is dead). */
  forget(usernameKey: string, nowMs: number): Promise<void>;
  /** Keys locked at `nowMs` (digests only: the table holds no usernames), longest lock first. */
  listLocked(nowMs: number, limit: number): Promise<{ usernameKey: string; failureCount: number; lockedUntilMs: number }[]>;
}

// Each miss means another attempt on the key was counted meanwhile; password attempts race only
// as many as the hash budget's slots, so this bound is for a runaway, not for a busy key.
const MAX_WRITE_ATTEMPTS = 100;

// Times as ms since the epoch (lib/db/sql.ts): both drivers read them alike.
const COLUMNS = `"failureCount", ${utcToMs(`"lastFailureAt"`)} AS "lastFailureAtMs", ${utcToMs(`"lockedUntil"`)} AS "lockedUntilMs",
  ${utcToMs(`"lastFailedAt"`)} AS "lastFailedAtMs", "wrongPasswords"`;

type Row = {
  failureCount: number;
  lastFailureAtMs: number;
  lockedUntilMs: number | null;
  lastFailedAtMs: number | null;
  wrongPasswords: string[];
};

function toState(row: Row): LockoutState | null {
  // A placeholder row (earlier versions inserted one before counting) has no failures yet.
  if (row.failureCount === 0) return null;
  return { failureCount: row.failureCount, lastFailureAtMs: row.lastFailureAtMs, lockedUntilMs: row.lockedUntilMs };
}

type Written = Pick<Row, "lastFailedAtMs"> & {
  alongFailureCount?: number | null;
  alongLastFailureAtMs?: number | null;
  alongLockedUntilMs?: number | null;
};

/** The `alongside` subject's row, read by the write's own statement (as the table was before the write). */
const alongsideRead = (along: Alongside | undefined, parameter: number) =>
  along ? `WITH alongside AS (SELECT * FROM "SignInLockout" WHERE "usernameKey" = $${parameter})` : "";

const ALONGSIDE_RETURNING = `, (SELECT "failureCount" FROM alongside) AS "alongFailureCount",
  (SELECT ${utcToMs(`"lastFailureAt"`)} FROM alongside) AS "alongLastFailureAtMs",
  (SELECT ${utcToMs(`"lockedUntil"`)} FROM alongside) AS "alongLockedUntilMs"`;

function alongsideRow(written: Written): Row | null {
  if (written.alongFailureCount == null || written.alongLastFailureAtMs == null) return null;
  return {
    failureCount: written.alongFailureCount,
    lastFailureAtMs: written.alongLastFailureAtMs,
    lockedUntilMs: written.alongLockedUntilMs ?? null,
    lastFailedAtMs: null,
    wrongPasswords: [],
  };
}

/** The SignInLockout table, in SQL straight to the driver: every refused guess reads it. */
export function sqlLockoutRepository(sql: Sql): LockoutRepository {
  const read = async (usernameKey: string): Promise<Row | null> =>
    (await sql.rows<Row>(`SELECT ${COLUMNS} FROM "SignInLockout" WHERE "usernameKey" = $1`, [usernameKey]))[0] ?? null;

  const repository: LockoutRepository = {
    async check(usernameKey, nowMs, policy) {
      const row = await read(usernameKey);
      return { ...checkLockout(row ? toState(row) : null, nowMs, policy), seen: { usernameKey, row } };
    },

    async admitAttempt(usernameKey, nowMs, policy, seen, alongside, fingerprint) {
      // Check-and-count as compare-and-set, two statements and no transaction: read the row, let
      // the rule decide in TypeScript, then write only if the row is still what was read (or, with
      // no row, insert only if none appeared). A concurrent attempt that changed it first makes
      // this write miss, and this attempt decides again on the new state: none is missed, none
      // slips past a lock. No transaction holds the embedded database's one connection (or a row
      // lock) while the rule runs. Every miss means another attempt was counted, so this ends.
      for (let attempt = 1; ; attempt++) {
        const fromSeen = attempt === 1 && seen?.usernameKey === usernameKey;
        const row = fromSeen ? seen.row : await read(usernameKey);
        const repeat = fingerprint !== undefined && row !== null && row.wrongPasswords.includes(fingerprint);
        const decision = admitAttempt(row ? toState(row) : null, nowMs, policy, repeat);
        // A refusal is never taken from a copy: a success or an unlock since may have cleared it.
        if (!decision.allowed && fromSeen) continue;
        if (!decision.allowed) return decision;
        const next = decision.state;
        const along = fromSeen ? alongside : undefined;
        // A failure that starts a new streak forgets the old one's fingerprints. A repeat writes its
        // unchanged state all the same: the same statements as a counted attempt, and its
        // compare-and-set still sees a count that raced it.
        const startsStreak = row !== null && !streakLive(toState(row), nowMs, policy);
        // The columns are timestamp(3) and the times whole ms, so the comparison is exact.
        // The write returns lastFailedAt as it is now: the row read may be older than a markFailed.
        const [written] = row
          ? await sql.rows<Written>(
              `${alongsideRead(along, 9)}
               UPDATE "SignInLockout" SET "failureCount" = $1, "lastFailureAt" = ${msToUtc("$2")}, "lockedUntil" = ${msToUtc("$3")},
                 "wrongPasswords" = CASE WHEN $8::boolean THEN '{}'::text[] ELSE "wrongPasswords" END
               WHERE "usernameKey" = $4 AND "failureCount" = $5 AND "lastFailureAt" = ${msToUtc("$6")}
                 AND "lockedUntil" IS NOT DISTINCT FROM ${msToUtc("$7")}
               RETURNING ${utcToMs(`"lastFailedAt"`)} AS "lastFailedAtMs"${along ? ALONGSIDE_RETURNING : ""}`,
              [
                next.failureCount,
                next.lastFailureAtMs,
                next.lockedUntilMs,
                usernameKey,
                row.failureCount,
                row.lastFailureAtMs,
                row.lockedUntilMs,
                startsStreak,
                ...(along ? [along.usernameKey] : []),
              ],
            )
          : await sql.rows<Written>(
              `${alongsideRead(along, 5)}
               INSERT INTO "SignInLockout" ("usernameKey", "failureCount", "lastFailureAt", "lockedUntil")
               VALUES ($1, $2, ${msToUtc("$3")}, ${msToUtc("$4")}) ON CONFLICT ("usernameKey") DO NOTHING
               RETURNING ${utcToMs(`"lastFailedAt"`)} AS "lastFailedAtMs"${along ? ALONGSIDE_RETURNING : ""}`,
              [usernameKey, next.failureCount, next.lastFailureAtMs, next.lockedUntilMs, ...(along ? [along.usernameKey] : [])],
            );
        // lastFailedAt is not compared: markFailed may move it meanwhile, and it counts nothing.
        if (written) {
          const admitted = { ...decision, lastFailedAtMs: written.lastFailedAtMs };
          if (!along) return admitted;
          const alongRow = alongsideRow(written);
          const alongCheck = checkLockout(alongRow ? toState(alongRow) : null, nowMs, along.policy);
          return { ...admitted, alongside: { ...alongCheck, seen: { usernameKey: along.usernameKey, row: alongRow } } };
        }
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

    async forget(usernameKey, nowMs) {
      // A username announced under attack is said calm as its row goes (lib/webhooks/attacks.ts), in the same statement.
      await sql.run(
        `WITH gone AS (DELETE FROM "SignInLockout" WHERE "usernameKey" = $1 RETURNING "usernameKey", "attackAnnounced")
         ${usernameCalmInsert("gone", "$2")}`,
        [usernameKey, nowMs],
      );
    },

    async markFailed(usernameKey, nowMs, mark = { underAttack: true }) {
      // The fingerprint goes first and the list is cut to the last few; one already there moves to
      // the front. Written after the check, so only a password that failed is remembered.
      await sql.run(
        `UPDATE "SignInLockout" SET "lastFailedAt" = CASE WHEN $3::boolean THEN ${msToUtc("$1")} ELSE "lastFailedAt" END,
           "wrongPasswords" = CASE WHEN $4::text IS NULL THEN "wrongPasswords"
             ELSE (ARRAY[$4::text] || array_remove("wrongPasswords", $4::text))[1:$5::int] END
         WHERE "usernameKey" = $2`,
        [nowMs, usernameKey, mark.underAttack, mark.fingerprint ?? null, REMEMBERED_WRONG_PASSWORDS],
      );
    },

    async markUnderAttack(usernameKey, nowMs) {
      await sql.run(
        `INSERT INTO "SignInLockout" ("usernameKey", "failureCount", "lastFailureAt", "lastFailedAt")
         VALUES ($1, 0, ${msToUtc("$2")}, ${msToUtc("$2")})
         ON CONFLICT ("usernameKey") DO UPDATE SET "lastFailedAt" = EXCLUDED."lastFailedAt"`,
        [usernameKey, nowMs],
      );
    },

    async clearUnderAttack(usernameKey) {
      await sql.run(`UPDATE "SignInLockout" SET "lastFailedAt" = NULL WHERE "usernameKey" = $1`, [usernameKey]);
    },

    async forgetWrongPasswords(usernameKey) {
      await sql.run(`UPDATE "SignInLockout" SET "wrongPasswords" = '{}' WHERE "usernameKey" = $1`, [usernameKey]);
    },

    async reset(usernameKey) {
      // The row stays (the retention pass removes it once idle): it may hold lastFailedAt.
      await sql.run(
        `UPDATE "SignInLockout" SET "failureCount" = 0, "lockedUntil" = NULL, "wrongPasswords" = '{}' WHERE "usernameKey" = $1`,
        [usernameKey],
      );
    },

    async resetAsSeen({ usernameKey, row }) {
      if (!row) return;
      // Compared as admitAttempt's write compares: a count since changed both.
      await sql.run(
        `UPDATE "SignInLockout" SET "failureCount" = 0, "lockedUntil" = NULL, "wrongPasswords" = '{}'
         WHERE "usernameKey" = $1 AND "failureCount" = $2 AND "lastFailureAt" = ${msToUtc("$3")}`,
        [usernameKey, row.failureCount, row.lastFailureAtMs],
      );
    },
  };
  // The lockout layer of a sign-in's trace (lib/tracing/spans.ts): its verdict, never the key.
  return {
    ...repository,
    check: (...args) =>
      inSpan(
        "lockout",
        () => repository.check(...args),
        (check) => (check.locked ? "locked" : "open"),
      ),
    admitAttempt: (...args) =>
      inSpan(
        "lockout",
        () => repository.admitAttempt(...args),
        (admitted) => (admitted.allowed ? "counted" : "locked"),
      ),
  };
}

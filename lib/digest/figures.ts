import { randomUUID } from "node:crypto";
import { msToUtc, type Sql } from "@/lib/db/sql";
import type { MailMessage } from "@/lib/mail/types";
import { WEEK_MS, type TallyEntry } from "./tally";

/** The refusals and failed checks the digest lists, in its order. */
export const REFUSAL_REASONS = [
  "sign_in_failed",
  "rate_limited",
  "captcha_invalid",
  "locked",
  "second_step_invalid",
  "busy",
  "unavailable",
] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** How many networks the digest names. */
export const NETWORKS_LISTED = 5;

/** One week's figures (weekStartMs is its Monday 00:00 UTC). */
export type DigestFigures = {
  weekStartMs: number;
  attempts: number;
  refusals: Record<RefusalReason, number>;
  accountsLocked: number;
  newDeviceConfirmations: number;
  takenOver: number;
  networks: { network: string; count: number }[];
};

/** A check the digest asks for, and the figure that prompts it. */
export type DigestCheck =
  | { kind: "taken_over"; count: number }
  | { kind: "unavailable"; count: number }
  | { kind: "busy"; count: number }
  | { kind: "locked"; count: number }
  | { kind: "network"; network: string; count: number };

/**
 * The kinds that end what a new device's sign-in started: the owner ending that session or every
 * other one, an operator ending them, or a reset of the password.
 */
const ENDING_KINDS = [
  "browser_session_revoked",
  "api_session_revoked",
  "signed_out_everywhere_else",
  "admin_sessions_revoked",
  "password_reset",
] as const;

/**
 * "Taken over", as the digest counts it: an account with an ending event (ENDING_KINDS) in the week
 * that came within 7 days after a successful sign-in from a browser and network (shortened) the
 * account had never signed in from before, when it had signed in before at all (a first device is
 * no news, as for the owner's notice). An upper bound: an owner tidying up after a new laptop
 * counts too; a takeover its owner never noticed does not (nothing else tells them apart).
 */
const TAKEN_OVER = `SELECT count(DISTINCT e."userId")::int AS "count" FROM "SecurityEvent" e
  WHERE e."kind" IN (${ENDING_KINDS.map((kind) => `'${kind}'`).join(", ")})
    AND e."createdAt" >= ${msToUtc("$1")} AND e."createdAt" < ${msToUtc("$2")}
    AND EXISTS (SELECT 1 FROM "SecurityEvent" s
      WHERE s."userId" = e."userId" AND s."kind" = 'sign_in_succeeded'
        AND s."createdAt" <= e."createdAt" AND s."createdAt" > e."createdAt" - INTERVAL '7 days'
        AND EXISTS (SELECT 1 FROM "SecurityEvent" p WHERE p."userId" = s."userId" AND p."kind" = 'sign_in_succeeded' AND p."createdAt" < s."createdAt")
        AND NOT EXISTS (SELECT 1 FROM "SecurityEvent" p WHERE p."userId" = s."userId" AND p."kind" = 'sign_in_succeeded'
          AND p."createdAt" < s."createdAt" AND p."address" = s."address" AND p."browser" IS NOT DISTINCT FROM s."browser"))`;

/** Locks in a week past which the digest asks for a look (a campaign rather than a few typos). */
export const LOCKED_WORTH_A_LOOK = 10;
/** One network's refusals past which, and past half of all, it is named as worth blocking or trusting. */
export const NETWORK_WORTH_A_LOOK = 100;

/** What the operator should check, from the week's figures; empty: nothing. Most urgent first. */
export function digestChecks(figures: DigestFigures): DigestCheck[] {
  const checks: DigestCheck[] = [];
  if (figures.takenOver > 0) checks.push({ kind: "taken_over", count: figures.takenOver });
  if (figures.refusals.unavailable > 0) checks.push({ kind: "unavailable", count: figures.refusals.unavailable });
  if (figures.refusals.busy > 0) checks.push({ kind: "busy", count: figures.refusals.busy });
  if (figures.accountsLocked >= LOCKED_WORTH_A_LOOK) checks.push({ kind: "locked", count: figures.accountsLocked });
  const refused = Object.values(figures.refusals).reduce((sum, count) => sum + count, 0);
  const top = figures.networks[0];
  if (top && top.count >= NETWORK_WORTH_A_LOOK && top.count * 2 > refused) checks.push({ kind: "network", ...top });
  return checks;
}

/** The digest's tables (prisma/migrations/20261213020000_weekly_digest), in SQL for both drivers. */
export function digestStore(sql: Sql) {
  return {
    /** Adds counts to their week's rows, whichever instance counted them. */
    async add(entries: TallyEntry[]): Promise<void> {
      if (entries.length === 0) return;
      await sql.run(
        `INSERT INTO "DigestCount" ("weekStart", "name", "count")
         SELECT ${msToUtc("t.w")}, t.n, t.c FROM json_to_recordset($1::json) AS t(w bigint, n text, c int)
         ON CONFLICT ("weekStart", "name") DO UPDATE SET "count" = "DigestCount"."count" + EXCLUDED."count"`,
        [JSON.stringify(entries.map((entry) => ({ w: entry.weekStartMs, n: entry.name, c: entry.count })))],
      );
    },

    async sent(weekStartMs: number): Promise<boolean> {
      const rows = await sql.rows(`SELECT 1 FROM "DigestSent" WHERE "weekStart" = ${msToUtc("$1")}`, [weekStartMs]);
      return rows.length > 0;
    },

    async figures(weekStartMs: number): Promise<DigestFigures> {
      const endMs = weekStartMs + WEEK_MS;
      const counts = await sql.rows<{ name: string; count: number }>(
        `SELECT "name", "count" FROM "DigestCount" WHERE "weekStart" = ${msToUtc("$1")}`,
        [weekStartMs],
      );
      const [events] = await sql.rows<{ locked: number; confirmations: number }>(
        `SELECT count(DISTINCT "userId") FILTER (WHERE "kind" = 'locked')::int AS "locked",
                count(*) FILTER (WHERE "kind" = 'device_confirmation_due')::int AS "confirmations"
         FROM "SecurityEvent" WHERE "createdAt" >= ${msToUtc("$1")} AND "createdAt" < ${msToUtc("$2")}
           AND "kind" IN ('locked', 'device_confirmation_due')`,
        [weekStartMs, endMs],
      );
      const [takenOver] = await sql.rows<{ count: number }>(TAKEN_OVER, [weekStartMs, endMs]);
      const outcome = (name: string) => counts.find((row) => row.name === `outcome:${name}`)?.count ?? 0;
      return {
        weekStartMs,
        attempts: counts.filter((row) => row.name.startsWith("outcome:")).reduce((sum, row) => sum + row.count, 0),
        refusals: Object.fromEntries(REFUSAL_REASONS.map((reason) => [reason, outcome(reason)])) as Record<RefusalReason, number>,
        accountsLocked: events?.locked ?? 0,
        newDeviceConfirmations: events?.confirmations ?? 0,
        takenOver: takenOver?.count ?? 0,
        networks: counts
          .filter((row) => row.name.startsWith("network:") && row.name !== "network:other")
          .map((row) => ({ network: row.name.slice("network:".length), count: row.count }))
          .sort((a, b) => b.count - a.count || a.network.localeCompare(b.network))
          .slice(0, NETWORKS_LISTED),
      };
    },

    /**
     * Claims the week and spools its mail in one statement: the DigestSent row's key is the week,
     * so of two instances (or a restart) racing, one inserts it and spools the mail, the other
     * spools nothing. True when this call did.
     */
    async claimAndSpool(weekStartMs: number, nowMs: number, message: MailMessage): Promise<boolean> {
      const rows = await sql.rows(
        `WITH claimed AS (
           INSERT INTO "DigestSent" ("weekStart", "sentAt") VALUES (${msToUtc("$1")}, ${msToUtc("$2")})
           ON CONFLICT ("weekStart") DO NOTHING RETURNING 1)
         INSERT INTO "MailSpool" ("id", "kind", "message", "attempts", "createdAt")
         SELECT $3, $4, $5::jsonb, 0, ${msToUtc("$2")} WHERE EXISTS (SELECT 1 FROM claimed)
         RETURNING "id"`,
        [weekStartMs, nowMs, randomUUID(), message.kind, JSON.stringify(message)],
      );
      return rows.length > 0;
    },
  };
}

export type DigestStore = ReturnType<typeof digestStore>;

import { randomUUID } from "node:crypto";
import { msToUtc, type Sql } from "@/lib/db/sql";
import { AT_RISK_WINDOW_MS } from "@/lib/factors/device-confirmation";
import { startPeriodic } from "@/lib/jobs/jobs";
import { webhookBody, type WebhookEvent } from "./events";

/**
 * "Under attack" and "calm again", for usernames and addresses, bounded whatever the attack's size:
 * at most EVENTS_PER_RUN of each type per run of the watch (every WATCH_INTERVAL_MS), and past
 * that one `attack.summary` saying how many more there were. Nothing here runs on a request.
 */
export const WATCH_INTERVAL_MS = 60_000;
export const EVENTS_PER_RUN = 20;
/** Rows a run marks at most (the rest wait for the next run): a username spray is bounded work per minute. */
const ROWS_PER_RUN = 1_000;

/** An address is calm once this long passed without its sign-in budget refusing it. */
export const ADDRESS_CALM_AFTER_MS = 15 * 60_000;
/** Networks the address watch keeps announced at once; past this, new ones are only counted. */
export const ADDRESSES_TRACKED = 1_000;

const iso = (column: string) => `to_char(${column}, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * One statement per transition: the rows whose mark changed are flipped, and their webhooks (the
 * first EVENTS_PER_RUN, then a summary) are queued in the same statement, so neither lands
 * without the other. FOR UPDATE SKIP LOCKED: of two instances, each row is flipped by one.
 */
function usernameTransition(type: "username.under_attack" | "username.calm", pick: string, announced: boolean): string {
  return `WITH picked AS (
      SELECT "usernameKey" FROM "SignInLockout" WHERE ${pick}
      ORDER BY "usernameKey" LIMIT ${ROWS_PER_RUN} FOR UPDATE SKIP LOCKED),
    flipped AS (
      UPDATE "SignInLockout" l SET "attackAnnounced" = ${announced} FROM picked p WHERE l."usernameKey" = p."usernameKey"
      RETURNING l."usernameKey"),
    numbered AS (SELECT "usernameKey", row_number() OVER (ORDER BY "usernameKey") AS n FROM flipped)
    INSERT INTO "WebhookOutbox" ("id", "type", "payload", "createdAt", "nextAttemptAt")
    SELECT 'msg_' || gen_random_uuid(), '${type}',
      json_build_object('type', '${type}', 'timestamp', ${iso(msToUtc("$1"))},
        'data', json_build_object('usernameKey', "usernameKey"))::text, ${msToUtc("$1")}, ${msToUtc("$1")}
    FROM numbered WHERE n <= ${EVENTS_PER_RUN}
    UNION ALL
    SELECT 'msg_' || gen_random_uuid(), 'attack.summary',
      json_build_object('type', 'attack.summary', 'timestamp', ${iso(msToUtc("$1"))},
        'data', json_build_object('event', '${type}', 'more', (count(*) - ${EVENTS_PER_RUN})::text))::text, ${msToUtc("$1")}, ${msToUtc("$1")}
    FROM numbered HAVING count(*) > ${EVENTS_PER_RUN}
    RETURNING "type"`;
}

/** A username is under attack while its untrusted-lane mark (lastFailedAt) is younger than the device confirmation's window. */
const UNDER_ATTACK = usernameTransition("username.under_attack", `NOT "attackAnnounced" AND "lastFailedAt" > ${msToUtc("$2")}`, true);
/** Calm: the mark expired, or the owner cleared it (proof of the mailbox: lastFailedAt is null). */
const CALM = usernameTransition(
  "username.calm",
  `"attackAnnounced" AND ("lastFailedAt" IS NULL OR "lastFailedAt" <= ${msToUtc("$2")})`,
  false,
);

/** username.calm for the rows of `source` (a CTE with "usernameKey" and "attackAnnounced") that were announced. */
export function usernameCalmInsert(source: string, nowParameter: string): string {
  return `INSERT INTO "WebhookOutbox" ("id", "type", "payload", "createdAt", "nextAttemptAt")
    SELECT 'msg_' || gen_random_uuid(), 'username.calm',
      json_build_object('type', 'username.calm', 'timestamp', ${iso(msToUtc(nowParameter))},
        'data', json_build_object('usernameKey', "usernameKey"))::text, ${msToUtc(nowParameter)}, ${msToUtc(nowParameter)}
    FROM ${source} WHERE "attackAnnounced"`;
}

/** Queues the usernames' transitions since the last run: how many webhooks of each type. */
export async function watchUsernames(sql: Sql, nowMs: number): Promise<{ underAttack: number; calm: number }> {
  const cutoff = nowMs - AT_RISK_WINDOW_MS;
  const underAttack = await sql.rows(UNDER_ATTACK, [nowMs, cutoff]);
  const calm = await sql.rows(CALM, [nowMs, cutoff]);
  return { underAttack: underAttack.length, calm: calm.length };
}

/**
 * The addresses whose sign-in budget (the per-address limit) refused them, by network (shortened
 * as the account page shows it), in memory: record() is a Map lookup on the refusal's path. Each
 * network is announced once until ADDRESS_CALM_AFTER_MS pass without a refusal, then said calm.
 * Per instance, and forgotten on a restart (a restart ends an announced network's watch without
 * its calm). Bounded: ADDRESSES_TRACKED networks, and EVENTS_PER_RUN announcements per run.
 */
export class AddressWatch {
  /** Network -> its last refusal, for the announced ones. */
  private readonly announced = new Map<string, number>();
  /** Networks refused since the last run and not yet announced (at most EVENTS_PER_RUN). */
  private readonly fresh = new Map<string, number>();
  private overflow = 0;

  refused(network: string, nowMs: number): void {
    if (network === "unknown") return;
    if (this.announced.has(network)) this.announced.set(network, nowMs);
    else if (this.fresh.has(network) || this.fresh.size < EVENTS_PER_RUN) this.fresh.set(network, nowMs);
    else this.overflow += 1;
  }

  /** What a run queues: the networks newly under attack, those calm again, and how many refusals went unannounced. */
  drain(nowMs: number): { underAttack: string[]; calm: string[]; unannounced: number } {
    const calm: string[] = [];
    for (const [network, lastMs] of this.announced) {
      if (calm.length >= EVENTS_PER_RUN) break;
      if (nowMs - lastMs < ADDRESS_CALM_AFTER_MS) continue;
      calm.push(network);
      this.announced.delete(network);
    }
    const underAttack: string[] = [];
    for (const [network, lastMs] of this.fresh) {
      if (this.announced.size >= ADDRESSES_TRACKED) {
        this.overflow += 1;
        continue;
      }
      this.announced.set(network, lastMs);
      underAttack.push(network);
    }
    this.fresh.clear();
    const unannounced = this.overflow;
    this.overflow = 0;
    return { underAttack, calm, unannounced };
  }
}

/** The address watch's webhooks, in one statement (none when there is nothing to say). */
export async function queueAddressEvents(sql: Sql, nowMs: number, drained: ReturnType<AddressWatch["drain"]>): Promise<number> {
  const events: WebhookEvent[] = [
    ...drained.underAttack.map((network): WebhookEvent => ({ type: "address.under_attack", atMs: nowMs, data: { network } })),
    ...drained.calm.map((network): WebhookEvent => ({ type: "address.calm", atMs: nowMs, data: { network } })),
    ...(drained.unannounced > 0
      ? [
          {
            type: "attack.summary",
            atMs: nowMs,
            data: { event: "address.under_attack", more: String(drained.unannounced) },
          } as WebhookEvent,
        ]
      : []),
  ];
  if (events.length === 0) return 0;
  await sql.run(
    `INSERT INTO "WebhookOutbox" ("id", "type", "payload", "createdAt", "nextAttemptAt")
     SELECT t.id, t.type, t.payload, ${msToUtc("$2")}, ${msToUtc("$2")} FROM json_to_recordset($1::json) AS t(id text, type text, payload text)`,
    [JSON.stringify(events.map((event) => ({ id: `msg_${randomUUID()}`, type: event.type, payload: webhookBody(event) }))), nowMs],
  );
  return events.length;
}

/** The watch, every WATCH_INTERVAL_MS on every instance (the usernames' flips are claimed row by row). */
export function startAttackWatch(deps: { sql: Sql; addressWatch: AddressWatch; clock: () => number; onError: (error: unknown) => void }): {
  stop(): Promise<void>;
  runOnce(): Promise<void>;
} {
  const runOnce = async () => {
    const nowMs = deps.clock();
    await watchUsernames(deps.sql, nowMs);
    const drained = deps.addressWatch.drain(nowMs);
    await queueAddressEvents(deps.sql, nowMs, drained);
  };
  const periodic = startPeriodic(runOnce, { intervalMs: WATCH_INTERVAL_MS, onError: deps.onError });
  return { stop: () => periodic.stop(), runOnce };
}

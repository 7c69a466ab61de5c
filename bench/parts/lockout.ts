import { lockDurationMs, type LockoutPolicy } from "@/lib/lockout/lockout-rules";
import { solve } from "@/tests/helpers/altcha";
import { getChallenge, getCsrf, register, signIn, type Csrf, type SignInOutcome } from "../lib/http";
import { answerLabel, legitUser, pacedSignIns, summarizeLegit, tally, type LegitUser } from "../lib/legit";
import { PART_TITLES, type Part, type PartContext, type PartReport } from "../lib/part";
import { DRILL_SETTINGS, type BenchServer } from "../lib/server";
import { fmt, sleep, table } from "../lib/stats";

/**
 * Part 6: the lockout as a denial of service. An attacker who knows a username keeps it locked:
 * five wrong passwords lock it, and the moment each lock ends one more wrong password locks it
 * again, for longer. Untrusted clients are told only a rounded wait (no lockedUntil), so the
 * attacker works from the lockout schedule (which it knows: it is the documented default here
 * scaled down) and polls around the expected end. Meanwhile the owner, on a device it signed in
 * from before (OWASP device cookie), tries to sign in at intervals, and so does a new device of
 * the same owner (no cookie).
 */

const OWNER_EMAIL = "lockout.owner@example.com";
const OWNER_PASSWORD = "correct horse battery staple";
const THRESHOLD = 5;
const MAX_TRIES_PER_SIGN_IN = 10;
// The attacker starts polling this long before the lock it expects to end, every POLL_MS.
const LEAD_MS = 100;
const POLL_MS = 20;

/**
 * The owner's known device may use the owner's lane 10 times an hour (knownDeviceLane, the
 * default, kept here): its one sign-in before the drill and OWNER_TRIES during it stay within.
 */
const LANE_PER_HOUR = 10;
const OWNER_TRIES = 8;

type Sizes = {
  baseSeconds: number;
  maxSeconds: number;
  drillMs: number;
  ownerIntervalMs: number;
  freshIntervalMs: number;
  prepared: number;
};

function sizes(smoke: boolean): Sizes {
  return smoke
    ? { baseSeconds: 1, maxSeconds: 1, drillMs: 3_000, ownerIntervalMs: 3_000 / 4, freshIntervalMs: 500, prepared: 30 }
    : { baseSeconds: 2, maxSeconds: 8, drillMs: 50_000, ownerIntervalMs: 50_000 / OWNER_TRIES, freshIntervalMs: 2_000, prepared: 150 };
}

/** 172.16–31.x.y for attacker attempt n: a new address for each, none shared with other drills. */
function attackerAddress(n: number): string {
  const value = n + 1;
  return `172.${16 + ((value >> 16) & 15)}.${(value >> 8) & 255}.${value & 255}`;
}

/** The owner's devices come from a CGNAT pool (100.96.x.y known, 100.97.x.y new), a new address per sign-in. */
function ownerAddress(pool: number): (n: number) => string {
  return (n) => `100.${96 + pool}.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
}

type Lock = { failures: number; lengthMs: number; fromMs: number; toMs: number };

/** The attacker: keeps OWNER_EMAIL locked until `endMs`, with pre-solved payloads while they last. */
async function attacker(baseUrl: string, csrf: Csrf, policy: LockoutPolicy, payloads: string[], endMs: number) {
  const answers: SignInOutcome[] = [];
  const locks: Lock[] = [];
  let next = 0;
  // The attacker's model of the server: failures counted in the streak so far, and when the lock
  // it set should end.
  let failures = 0;
  let streak = 0;
  let lastFailure: SignInOutcome | undefined;
  let expectedEndMs: number | undefined;
  while (performance.now() < endMs) {
    if (expectedEndMs !== undefined && streak === 0) {
      const waitMs = Math.min(expectedEndMs - LEAD_MS, endMs) - performance.now();
      if (waitMs > 0) await sleep(waitMs);
      if (performance.now() >= endMs) break;
    }
    const n = next++;
    const address = attackerAddress(n);
    const altcha = n < payloads.length ? payloads[n]! : await solve(await getChallenge(baseUrl, address));
    const outcome = await signIn(baseUrl, { address, csrf, email: OWNER_EMAIL, password: `guess-${n}-Winter2026!`, altcha });
    answers.push(outcome);
    if (outcome.kind === "invalid") {
      // Counted: the lock is (re)set if the count reached the threshold. Look at once.
      streak++;
      lastFailure = outcome;
    } else if (outcome.kind === "locked") {
      if (streak > 0 && lastFailure) {
        // The streak's last failure set this lock. One failure on top of a known count, or a
        // count that started again (the owner got in from an untrusted client and reset it).
        failures = streak >= 2 ? streak : failures + 1;
        const lengthMs = lockDurationMs(failures, policy);
        locks.push({ failures, lengthMs, fromMs: lastFailure.startedMs, toMs: lastFailure.endedMs });
        expectedEndMs = lastFailure.startedMs + lengthMs;
        streak = 0;
      } else {
        await sleep(POLL_MS);
      }
    } else {
      // A limiter, captcha or budget refusal: not what this drill is about; back off a little.
      await sleep(Math.min(1_000, (outcome.retryAfterSeconds || 0.2) * 1000));
    }
  }
  return { answers, locks, solvedOnTheFly: Math.max(0, next - payloads.length) };
}

async function drill(context: PartContext, server: BenchServer): Promise<PartReport> {
  const size = sizes(context.smoke);
  const baseUrl = server.baseUrl;
  const policy: LockoutPolicy = {
    threshold: THRESHOLD,
    baseLockMs: size.baseSeconds * 1000,
    maxLockMs: size.maxSeconds * 1000,
    quietPeriodMs: 12 * 3_600_000,
  };

  const registered = await register(baseUrl, "100.127.1.1", OWNER_EMAIL, OWNER_PASSWORD);
  if (![201, 202].includes(registered.status)) throw new Error(`registering the owner answered ${registered.status}: ${registered.text}`);
  const known: LegitUser = legitUser("Owner, known device", OWNER_EMAIL, OWNER_PASSWORD, true, ownerAddress(0));
  const fresh: LegitUser = legitUser("Owner, new device", OWNER_EMAIL, OWNER_PASSWORD, false, ownerAddress(1));
  const [knownCsrf, freshCsrf, attackCsrf] = [await getCsrf(baseUrl), await getCsrf(baseUrl), await getCsrf(baseUrl)];

  // The owner's device signed in once before the attack: it holds a device cookie.
  const [first] = await pacedSignIns(baseUrl, knownCsrf, known, { count: 1, paceMs: 0, maxTries: MAX_TRIES_PER_SIGN_IN });
  if (!first?.signedIn || !known.deviceToken)
    throw new Error(`the owner's first sign-in did not give it a device cookie (${first?.outcome ?? "no answer"})`);

  context.say(`preparing ${size.prepared} attacker attempts (a challenge per address, solved by the bench)`);
  const payloads: string[] = [];
  for (let n = 0; n < size.prepared; n++) payloads.push(await solve(await getChallenge(baseUrl, attackerAddress(n))));

  context.say(
    `attack: keeping ${OWNER_EMAIL} locked for ${size.drillMs / 1000} s (lock ${size.baseSeconds} s doubling to ${size.maxSeconds} s); the owner tries every ${size.ownerIntervalMs} ms from a known device and every ${size.freshIntervalMs} ms from a new one`,
  );
  const failedBefore = server.eventCount("sign_in_failed", "untrusted");
  const failedBeforeAll = server.eventCount("sign_in_failed");
  const declinedBefore = server.eventCount("device_lane_declined");
  const succeededBefore = {
    trusted: server.eventCount("sign_in_succeeded", "trusted"),
    untrusted: server.eventCount("sign_in_succeeded", "untrusted"),
  };
  const startedMs = performance.now();
  const endMs = startedMs + size.drillMs;
  const stop = () => performance.now() >= endMs;
  const [attack, knownRuns, freshRuns] = await Promise.all([
    attacker(baseUrl, attackCsrf, policy, payloads, endMs),
    // The first tries come once the first lock is surely set.
    pacedSignIns(baseUrl, knownCsrf, known, {
      count: Math.round(size.drillMs / size.ownerIntervalMs),
      paceMs: size.ownerIntervalMs,
      maxTries: MAX_TRIES_PER_SIGN_IN,
      delayMs: size.ownerIntervalMs / 2,
      stop,
    }),
    pacedSignIns(baseUrl, freshCsrf, fresh, {
      count: Math.ceil(size.drillMs / size.freshIntervalMs),
      paceMs: size.freshIntervalMs,
      maxTries: MAX_TRIES_PER_SIGN_IN,
      delayMs: size.freshIntervalMs / 2,
      stop,
    }),
  ]);
  const elapsedMs = performance.now() - startedMs;
  const invalid = attack.answers.filter((answer) => answer.kind === "invalid").length;
  await server.waitForEvents("sign_in_failed", failedBeforeAll + invalid, 10_000);
  const reachedArgon2 = server.eventCount("sign_in_failed", "untrusted") - failedBefore;
  const trustedSucceeded = server.eventCount("sign_in_succeeded", "trusted") - succeededBefore.trusted;
  const untrustedSucceeded = server.eventCount("sign_in_succeeded", "untrusted") - succeededBefore.untrusted;
  const laneDeclined = server.eventCount("device_lane_declined") - declinedBefore;

  const ki = summarizeLegit(knownRuns, Number(DRILL_SETTINGS.ALTCHA_MAX_COUNTER));
  const fi = summarizeLegit(freshRuns, Number(DRILL_SETTINGS.ALTCHA_MAX_COUNTER));
  const { locks } = attack;
  // Between two locks the username was open to anyone for at most this long: from the earliest
  // moment the earlier lock could end to the latest moment the next failure could be counted.
  const gaps = locks.slice(1).map((lock, i) => Math.max(0, lock.toMs - (locks[i]!.fromMs + locks[i]!.lengthMs)));
  const lockedMs = locks.reduce(
    (sum, lock, i) => sum + Math.max(0, Math.min(lock.fromMs + lock.lengthMs, locks[i + 1]?.fromMs ?? Infinity, endMs) - lock.fromMs),
    0,
  );
  const firstLockMs = locks[0] ? locks[0].fromMs - startedMs : Number.NaN;
  const untrustedLocked = [...attack.answers, ...freshRuns.map((run) => ({ kind: run.kind, label: run.outcome }))].filter(
    (answer) => answer.kind === "locked",
  );
  const lockLabels = untrustedLocked.map((answer) => ("label" in answer ? answer.label : answerLabel(answer)));
  const withLockedUntil = lockLabels.filter((label) => label.includes("lockedUntil")).length;
  const freshRefusedShare = fi.runs === 0 ? Number.NaN : freshRuns.filter((run) => run.kind === "locked").length / fi.runs;
  const ownerRate = ki.runs === 0 ? Number.NaN : ki.signedIn / ki.runs;

  const markdown = [
    `Server: \`node server.mjs\`, production build, fresh PGlite database, default limits, \`LOCKOUT_THRESHOLD=${THRESHOLD}\`, \`LOCKOUT_BASE_SECONDS=${size.baseSeconds}\` and \`LOCKOUT_MAX_SECONDS=${size.maxSeconds}\` (the default schedule, 60 s doubling to 1 h, scaled down so that several lock periods fit in ${size.drillMs / 1000} s), \`ALTCHA_MAX_COUNTER=${DRILL_SETTINGS.ALTCHA_MAX_COUNTER}\`.`,
    "",
    `The attacker (no device cookie, a new address 172.16/12 for every attempt, so no per-address limit applies) sends ${THRESHOLD} wrong passwords for the owner's username, then keeps it locked: an untrusted client is told only a rounded Retry-After and no \`lockedUntil\`, so the attacker computes each lock's end from the schedule and its own count of failures, starts polling ${LEAD_MS} ms before it (one wrong-password sign-in every ${POLL_MS} ms, each with its own proof of work, refused with 429 while the lock holds) and the first one that gets through re-locks the username for longer. ${size.prepared} proofs of work were solved before the drill, the rest as needed. The owner tries to sign in from a new address each time (so its own per-username allowance of 5 per 15 minutes per address does not refuse it): from its **known device** every ${fmt.fixed(size.ownerIntervalMs / 1000, 2)} s (it signed in once before the drill and presents its newest device cookie, keeping the new one from each success; with that first sign-in, ${1 + Math.round(size.drillMs / size.ownerIntervalMs)} uses of the owner's lane, within the default ${LANE_PER_HOUR} per username per hour, \`RATE_LIMIT_KNOWN_DEVICE_LANE\`, beyond which a known device is served as an untrusted client), and every ${size.freshIntervalMs / 1000} s from a **new device** of the same account (never a cookie). Each sign-in: challenge, solve, post; a 503 is tried again after Retry-After (up to ${MAX_TRIES_PER_SIGN_IN} tries), a 429 ends it (the new device then tries again at its next interval rather than after the minutes it is told).`,
    "",
    table(
      [
        "Owner's client",
        "Sign-ins tried",
        "Signed in",
        "Success rate",
        "First try: time to the answer p50 / p99",
        "Answers (every try)",
        "Server log: successes in the lane",
      ],
      [
        [
          "Known device (device cookie)",
          fmt.int(ki.runs),
          `${fmt.int(ki.signedIn)} (${fmt.int(ki.firstTry)} on the first try)`,
          `**${fmt.fixed(100 * ownerRate, 0)}%**`,
          `${fmt.ms(ki.postP50)} / ${fmt.ms(ki.postP99)}`,
          ki.answers,
          `trusted: ${fmt.int(trustedSucceeded)}`,
        ],
        [
          "New device (no cookie)",
          fmt.int(fi.runs),
          fmt.int(fi.signedIn),
          `${fmt.fixed(fi.runs === 0 ? Number.NaN : (100 * fi.signedIn) / fi.runs, 0)}%`,
          `${fmt.ms(fi.postP50)} / ${fmt.ms(fi.postP99)}`,
          fi.answers,
          `untrusted: ${fmt.int(untrustedSucceeded)}`,
        ],
      ],
    ),
    "",
    `Known-device successes that did not rotate its cookie: ${fmt.int(ki.notRotated)}; known-device sign-ins the server moved to the untrusted lane (\`device_lane_declined\`): ${fmt.int(laneDeclined)}. No earlier figure to compare with: the previous run had no lockout drill. Before commit 65bf74d every client shared the username's lock, so the owner's own browser would have been answered as the new device is here (from the code, not measured).`,
    "",
    table(
      ["The attacker", "Value"],
      [
        ["Drill length / first lock set after", `${fmt.fixed(elapsedMs / 1000, 1)} s / ${fmt.ms(firstLockMs)}`],
        [
          "Locks set (lock periods)",
          `${fmt.int(locks.length)}, of ${locks.map((lock) => `${fmt.fixed(lock.lengthMs / 1000, 0)} s`).join(", ")}`,
        ],
        [
          "Username locked for untrusted clients (attacker's estimate from the schedule)",
          `${fmt.fixed((100 * lockedMs) / size.drillMs, 1)}% of the drill`,
        ],
        ["New device's tries refused with 429 locked", `${fmt.fixed(100 * freshRefusedShare, 0)}%`],
        [
          "Open between two locks (upper bound: earliest possible end of a lock to the latest moment the next failure was counted)",
          gaps.length === 0 ? "n/a" : `mean ${fmt.ms(gaps.reduce((a, b) => a + b, 0) / gaps.length)}, max ${fmt.ms(Math.max(...gaps))}`,
        ],
        [
          "Attempts (each a proof of work)",
          `${fmt.int(attack.answers.length)} (${fmt.int(attack.answers.length - attack.solvedOnTheFly)} pre-solved, ${fmt.int(attack.solvedOnTheFly)} solved during the drill): ${tally(attack.answers.map(answerLabel))}`,
        ],
        ["Reached Argon2id (server log: `sign_in_failed`, untrusted lane)", fmt.int(reachedArgon2)],
        [
          "Untrusted 429 locked answers (attacker and new device) carrying `lockedUntil`",
          `${fmt.int(withLockedUntil)} of ${fmt.int(untrustedLocked.length)}`,
        ],
      ],
    ),
  ].join("\n");
  return {
    markdown,
    headlines: [
      `Lockout as denial of service, ${fmt.fixed(elapsedMs / 1000, 0)} s with the username re-locked ${fmt.int(locks.length)} times (${fmt.fixed((100 * lockedMs) / size.drillMs, 0)}% of the time locked): the owner on a known device signed in ${fmt.int(ki.signedIn)} of ${fmt.int(ki.runs)} times (${fmt.fixed(100 * ownerRate, 0)}%), first answer p99 ${fmt.ms(ki.postP99)}; on a new device ${fmt.int(fi.signedIn)} of ${fmt.int(fi.runs)} (${tally(freshRuns.map((run) => run.outcome))}); ${fmt.int(reachedArgon2)} attacker attempts reached Argon2id`,
    ],
  };
}

export const lockoutPart: Part = {
  id: "lockout",
  title: PART_TITLES.lockout,
  serverSettings(smoke) {
    const size = sizes(smoke);
    return {
      LOCKOUT_THRESHOLD: String(THRESHOLD),
      LOCKOUT_BASE_SECONDS: String(size.baseSeconds),
      LOCKOUT_MAX_SECONDS: String(size.maxSeconds),
    };
  },
  run(context: PartContext): Promise<PartReport> {
    return context.withServer((server) => drill(context, server));
  },
};

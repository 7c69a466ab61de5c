import os from "node:os";
import { issueChallenge } from "@/lib/captcha/altcha";
import { solve } from "@/tests/helpers/altcha";
import { getCsrf, register, signIn, solvedPayload, type SignInOutcome } from "../lib/http";
import { answerLabel, legitUser, pacedSignIns, summarizeLegit, type LegitSignIn, type LegitSummary, type LegitUser } from "../lib/legit";
import { PART_TITLES, type Part, type PartContext, type PartReport } from "../lib/part";
import { DRILL_SETTINGS, type BenchServer } from "../lib/server";
import { fmt, pool, sleep, table } from "../lib/stats";

/**
 * Part 3: a distributed attack. Each of many client addresses (named through the trusted-proxy
 * header) makes one wrong-password sign-in, well below every per-address and per-username limit,
 * so the limiter cannot tell it from a person. Meanwhile two legitimate users sign in again and
 * again: one on a known device (it signed in before the attack and presents its newest device
 * cookie, OWASP device cookies), one on a new device (no cookie). What is left to protect the
 * server is ALTCHA (each attempt costs the attacker a proof of work, and a solution is spent on
 * first use) and the hash budget (Argon2id at most HASH_CONCURRENCY at once, HASH_QUEUE waiting
 * per lane, 503 beyond; known devices have a lane of their own with HASH_TRUSTED_SLOTS reserved).
 */
const KNOWN_EMAIL = "known.device@example.com";
const NEW_EMAIL = "new.device@example.com";
const LEGIT_PASSWORD = "correct horse battery staple";
// Every fifth attacker replays a solution that was already spent instead of paying for a new one.
const REPLAY_EVERY = 5;
const ATTACK_CONCURRENCY = 16;
const PREPARE_CONCURRENCY = 8;
const MAX_TRIES_PER_SIGN_IN = 10;
// As many sign-ins per user during the attack as the single user of the previous run made.
const SIGN_INS_UNDER_ATTACK = 49;
const IDLE_SIGN_INS = 30;
// One sign-in per user per PACE_MS (or when the previous one ends): spread over the attack.
const PACE_MS = 1_000;
const DEFAULT_ALTCHA_MAX_COUNTER = 100_000;
const BENCH_ALTCHA_MAX_COUNTER = Number(DRILL_SETTINGS.ALTCHA_MAX_COUNTER);
/**
 * The owner's lane is limited per username (knownDeviceLane, 10 an hour by default): past it a
 * known device is served as an untrusted client. This drill's known device signs in 80 times in a
 * few minutes to measure the lane, so the limit is lifted, as the users' addresses change to stay
 * clear of the per-username limit: the drill measures the attack's effect, not those limits.
 */
const LANE_SETTINGS = { RATE_LIMIT_KNOWN_DEVICE_LANE: "1000/1h" };

/**
 * What bench/RESULTS.md said for this drill before known devices existed (commit 873e697,
 * measured 2026-11-30T03:41:47Z on 2 AMD EPYC vCPUs): one legitimate user, no device cookie,
 * signing in back to back. Quoted beside the new figures; not measured by this run.
 */
const BEFORE = {
  label: "Before known devices (commit 873e697 on 2 × AMD EPYC; one user, no device cookie)",
  idle: {
    runs: 30,
    firstTry: 30,
    signedIn: 30,
    post: "45.4 ms / 77.5 ms",
    total: "56.1 ms / 103 ms",
    answers: "200 signed in: 30",
    postP99: 77.5,
  },
  attack: {
    runs: 49,
    // 35 of the 49 sign-ins needed at least one more try.
    firstTry: 14,
    signedIn: 46,
    post: "88.8 ms / 588 ms",
    total: "1553 ms / 5239 ms",
    answers: "503 busy (hash budget full): 75; 200 signed in: 46; 429 rate_limited: 3",
    postP99: 588,
  },
  attackRows: {
    used: "10,000 / 10,000 in 107.3 s (93/s)",
    busy: "4,038",
    invalid: "3,962",
    replayed: "2,000",
    reached: "3,962 (36.9/s)",
    busyShare: "4,038 (40.4% of attempts)",
    inFlight: "mean 12.3, max 15; queue ≈ mean 10.3, max 13 (2 slots)",
    prepare: "8,000 solutions in 26.5 s, 14.4 CPU-s",
    defaultSize: "125 ms per solution: 20.9 CPU-minutes for 10,000 attempts",
  },
};

/** 10.a.b.c for attacker n: distinct, valid, and not one of the bench's other ranges. */
function attackerAddress(n: number): string {
  const value = n + 1;
  return `10.${(value >> 16) & 255}.${(value >> 8) & 255}.${value & 255}`;
}

/**
 * A legitimate user's address for its n-th sign-in, from a carrier-grade NAT pool (100.64/10;
 * 100.64.x.y for the first user, 100.65.x.y for the second). A new one per sign-in, so that dozens
 * of sign-ins in a row are not refused by the user's own per-username limit (5 per 15 min): this
 * drill measures the attack's effect, not that limit.
 */
function legitAddress(user: number): (n: number) => string {
  return (n) => `100.${64 + user}.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
}

type AttackAttempt = SignInOutcome & { replay: boolean };

/** Mean and largest number of intervals open at once, sampled every `stepMs`. */
function concurrency(
  intervals: readonly { startedMs: number; endedMs: number }[],
  fromMs: number,
  toMs: number,
  stepMs = 10,
): { mean: number; max: number } {
  if (intervals.length === 0 || toMs <= fromMs) return { mean: 0, max: 0 };
  const steps = Math.ceil((toMs - fromMs) / stepMs);
  const delta = new Int32Array(steps + 2);
  for (const { startedMs, endedMs } of intervals) {
    delta[Math.max(0, Math.ceil((startedMs - fromMs) / stepMs))]! += 1;
    delta[Math.min(steps + 1, Math.ceil((endedMs - fromMs) / stepMs))]! -= 1;
  }
  let open = 0;
  let sum = 0;
  let max = 0;
  for (let i = 0; i < steps; i++) {
    open += delta[i]!;
    sum += open;
    max = Math.max(max, open);
  }
  return { mean: sum / steps, max };
}

/** What a solution costs at the default proof-of-work size, measured here (the attacker's bill). */
async function solveCostMs(maxCounter: number, samples: number): Promise<number> {
  const settings = { hmacSecret: "bench-altcha-secret-".padEnd(40, "x"), expiresSeconds: 300, maxCounter };
  await solve(await issueChallenge(settings, Date.now()));
  const startedMs = performance.now();
  for (let i = 0; i < samples; i++) await solve(await issueChallenge(settings, Date.now()));
  return (performance.now() - startedMs) / samples;
}

/** The three slowest first answers, slowest first. */
function slowest(runs: readonly LegitSignIn[]): string {
  return [...runs]
    .map((run) => run.firstPostMs)
    .sort((a, b) => b - a)
    .slice(0, 3)
    .map((ms) => fmt.ms(ms))
    .join(", ");
}

function userRow(user: string, phase: string, summary: LegitSummary): string[] {
  return [
    user,
    phase,
    fmt.int(summary.runs),
    `${fmt.int(summary.firstTry)}/${fmt.int(summary.runs)}`,
    `${fmt.int(summary.signedIn)}/${fmt.int(summary.runs)}`,
    `${fmt.ms(summary.postP50)} / ${fmt.ms(summary.postP99)}`,
    summary.signedIn === 0 ? "n/a" : `${fmt.ms(summary.totalP50)} / ${fmt.ms(summary.totalP99)}`,
    summary.answers,
    `${fmt.fixed(summary.powFactor, 1)}×`,
  ];
}

function beforeRow(phase: string, before: (typeof BEFORE)["idle"]): string[] {
  return [
    BEFORE.label,
    phase,
    fmt.int(before.runs),
    `${before.firstTry}/${before.runs}`,
    `${before.signedIn}/${before.runs}`,
    before.post,
    before.total,
    before.answers,
    "1.0× (one size then)",
  ];
}

/** Ratio of a figure under attack to the same user's idle figure, with the goal when there is one. */
function ratioLine(label: string, idle: LegitSummary, attack: LegitSummary, goal?: { maxP99Ratio: number }): string {
  const p99Ratio = attack.postP99 / idle.postP99;
  const goals = goal
    ? ` Goals: p99 under attack ≤ ${goal.maxP99Ratio}× idle: **${p99Ratio <= goal.maxP99Ratio ? "met" : "not met"}**; every sign-in on the first try: **${attack.firstTry === attack.runs && attack.runs > 0 ? "met" : `not met (${attack.firstTry}/${attack.runs})`}**.`
    : "";
  return `${label}: under attack ÷ idle, first answer p50 ${fmt.ratio(attack.postP50 / idle.postP50)}, p99 ${fmt.ratio(p99Ratio)}; until signed in p50 ${fmt.ratio(attack.totalP50 / idle.totalP50)}, p99 ${fmt.ratio(attack.totalP99 / idle.totalP99)}.${goals}`;
}

async function drill(context: PartContext, server: BenchServer): Promise<PartReport> {
  const attackers = context.smoke ? 60 : 10_000;
  const idleSignIns = context.smoke ? 3 : IDLE_SIGN_INS;
  const attackSignIns = context.smoke ? 3 : SIGN_INS_UNDER_ATTACK;
  const paceMs = context.smoke ? 100 : PACE_MS;
  const maxAttackMs = context.smoke ? 15_000 : 240_000;
  const baseUrl = server.baseUrl;
  const hashConcurrency = os.availableParallelism();
  // HASH_TRUSTED_SLOTS is left at its default: 1 when HASH_CONCURRENCY >= 2.
  const trustedSlots = hashConcurrency >= 2 ? 1 : 0;

  for (const [n, email] of [KNOWN_EMAIL, NEW_EMAIL].entries()) {
    const registered = await register(baseUrl, `100.127.0.${n + 10}`, email, LEGIT_PASSWORD);
    if (![201, 202].includes(registered.status)) throw new Error(`registering ${email} answered ${registered.status}: ${registered.text}`);
  }
  const known: LegitUser = legitUser("Known device", KNOWN_EMAIL, LEGIT_PASSWORD, true, legitAddress(0));
  const fresh: LegitUser = legitUser("New device", NEW_EMAIL, LEGIT_PASSWORD, false, legitAddress(1));
  const knownCsrf = await getCsrf(baseUrl);
  const freshCsrf = await getCsrf(baseUrl);
  const attackCsrf = await getCsrf(baseUrl);

  // The known device signs in once, before anything is measured: from then on it has a cookie.
  const [first] = await pacedSignIns(baseUrl, knownCsrf, known, { count: 1, paceMs: 0, maxTries: MAX_TRIES_PER_SIGN_IN });
  if (!first?.signedIn || !known.deviceToken)
    throw new Error(`the known device's first sign-in did not give it a device cookie (${first?.outcome ?? "no answer"})`);

  context.say(`idle: ${idleSignIns} sign-ins of each legitimate user, one per ${paceMs} ms`);
  const trustedBefore = server.eventCount("sign_in_succeeded", "trusted");
  const declinedBefore = server.eventCount("device_lane_declined");
  const [knownIdle, freshIdle] = await Promise.all([
    pacedSignIns(baseUrl, knownCsrf, known, { count: idleSignIns, paceMs, maxTries: MAX_TRIES_PER_SIGN_IN }),
    pacedSignIns(baseUrl, freshCsrf, fresh, { count: idleSignIns, paceMs, maxTries: MAX_TRIES_PER_SIGN_IN, delayMs: paceMs / 2 }),
  ]);
  const trustedIdle = server.eventCount("sign_in_succeeded", "trusted") - trustedBefore;

  // Preparation (not part of the attack window): every paying attacker fetches a challenge as its
  // own address and solves it; the replayers get one solution that is spent right here.
  context.say(`preparing ${fmt.int(attackers)} attackers (challenges fetched as each address, solved by the bench)`);
  const spent = await solvedPayload(baseUrl, "100.127.0.2");
  await signIn(baseUrl, {
    address: "100.127.0.2",
    csrf: attackCsrf,
    email: "spent@example.com",
    password: "wrong-password-123",
    altcha: spent,
  });
  const payloads: string[] = new Array<string>(attackers);
  const prepareStartedMs = performance.now();
  const prepareCpu = process.cpuUsage();
  await pool(attackers, PREPARE_CONCURRENCY, Date.now() + 10 * 60_000, async (i) => {
    payloads[i] = i % REPLAY_EVERY === 0 ? spent : await solvedPayload(baseUrl, attackerAddress(i));
  });
  const prepareMs = performance.now() - prepareStartedMs;
  const prepareCpuUsed = process.cpuUsage(prepareCpu);
  const prepareCpuMs = (prepareCpuUsed.user + prepareCpuUsed.system) / 1000;
  const paying = payloads.filter((payload) => payload !== spent).length;
  await sleep(1_000);

  context.say(
    `attack: ${fmt.int(attackers)} addresses, ${ATTACK_CONCURRENCY} at a time, while both legitimate users sign in (up to ${attackSignIns} each)`,
  );
  const failedBefore = server.eventCount("sign_in_failed");
  const errorsBefore = server.errorLines().length;
  const succeededBefore = {
    trusted: server.eventCount("sign_in_succeeded", "trusted"),
    untrusted: server.eventCount("sign_in_succeeded", "untrusted"),
  };
  const attempts: AttackAttempt[] = [];
  let attackDone = false;
  const attackStartedMs = performance.now();
  const deadlineMs = Date.now() + maxAttackMs;
  const attack = pool(attackers, ATTACK_CONCURRENCY, deadlineMs, async (i) => {
    const outcome = await signIn(baseUrl, {
      address: attackerAddress(i),
      csrf: attackCsrf,
      email: `victim-${i}@example.com`,
      password: `guess-${i}-Summer2026!`,
      altcha: payloads[i]!,
    });
    attempts.push({ ...outcome, replay: payloads[i] === spent });
  }).finally(() => (attackDone = true));
  const stop = () => attackDone;
  const legit = Promise.all([
    pacedSignIns(baseUrl, knownCsrf, known, { count: attackSignIns, paceMs, maxTries: MAX_TRIES_PER_SIGN_IN, stop }),
    pacedSignIns(baseUrl, freshCsrf, fresh, { count: attackSignIns, paceMs, maxTries: MAX_TRIES_PER_SIGN_IN, delayMs: paceMs / 2, stop }),
  ]);
  const used = await attack;
  const attackEndedMs = performance.now();
  const [knownAttack, freshAttack] = await legit;
  // Attempts already admitted finish their Argon2id after the last answer to the attackers.
  await server.waitForEvents("sign_in_failed", failedBefore + attempts.filter((attempt) => attempt.kind === "invalid").length, 30_000);
  const reachedArgon2 = server.eventCount("sign_in_failed") - failedBefore;
  const trustedSucceeded = server.eventCount("sign_in_succeeded", "trusted") - succeededBefore.trusted;
  const untrustedSucceeded = server.eventCount("sign_in_succeeded", "untrusted") - succeededBefore.untrusted;
  // A known device the server served as an untrusted client (lane limit, or the device busy).
  const laneDeclined = server.eventCount("device_lane_declined") - declinedBefore;
  const attackSeconds = (attackEndedMs - attackStartedMs) / 1000;
  // A legitimate sign-in that ended after the attack's last answer was not entirely under attack.
  const lastLegitEndMs = Math.max(...[...knownAttack, ...freshAttack].map((run) => run.startedMs + run.totalMs), attackEndedMs);

  const byKind = new Map<string, number>();
  for (const attempt of attempts) byKind.set(answerLabel(attempt), (byKind.get(answerLabel(attempt)) ?? 0) + 1);
  const legitRuns: LegitSignIn[] = [...knownIdle, ...freshIdle, ...knownAttack, ...freshAttack];
  const sentBack =
    attempts.filter((attempt) => attempt.kind === "csrf_invalid" || answerLabel(attempt).includes("csrf=true")).length +
    legitRuns.flatMap((run) => [...run.setbacks, run.outcome]).filter((label) => label.includes("csrf")).length;
  const busy = attempts.filter((attempt) => attempt.kind === "busy").length;
  const serverErrorAnswers = attempts.filter((attempt) => attempt.kind === "server_error").length;
  const captchaRefused = attempts.filter((attempt) => attempt.kind === "captcha_invalid").length;
  const admitted = attempts.filter((attempt) => attempt.kind === "invalid");
  const inFlight = concurrency(admitted, attackStartedMs, attackEndedMs);
  const untrustedSlots = hashConcurrency - trustedSlots;
  const serverErrors = server.errorLines().slice(errorsBefore);
  if (serverErrors.length > 0)
    context.say(`server logged ${serverErrors.length} error line(s), e.g.:\n${serverErrors.slice(0, 3).join("\n")}`);
  const defaultSolveMs = await solveCostMs(DEFAULT_ALTCHA_MAX_COUNTER, context.smoke ? 1 : 10);

  const summaries = {
    knownIdle: summarizeLegit(knownIdle, BENCH_ALTCHA_MAX_COUNTER),
    knownAttack: summarizeLegit(knownAttack, BENCH_ALTCHA_MAX_COUNTER),
    freshIdle: summarizeLegit(freshIdle, BENCH_ALTCHA_MAX_COUNTER),
    freshAttack: summarizeLegit(freshAttack, BENCH_ALTCHA_MAX_COUNTER),
  };
  const { knownIdle: ki, knownAttack: ka, freshIdle: fi, freshAttack: fa } = summaries;
  const notRotated = ki.notRotated + ka.notRotated;
  const markdown = [
    'What this part measures: a **spray**. Every attempt names a username of its own, so no account sees more than one guess and "reached Argon2id" counts guesses spread over many accounts, not an attack on one owner; part 11 has the attack on one account, and the owner\'s sign-in during it.',
    "",
    `Server: \`node server.mjs\`, production build, fresh PGlite database, default limits and hash budget (HASH_CONCURRENCY = ${hashConcurrency} CPUs, HASH_QUEUE = 8 per lane, HASH_TRUSTED_SLOTS = ${trustedSlots} (the default): untrusted work runs in at most ${untrustedSlots} slot(s)), \`ALTCHA_MAX_COUNTER=${BENCH_ALTCHA_MAX_COUNTER}\` (so the bench can pay for ${fmt.int(paying)} proofs of work; the server raises it up to 8× under pressure) and \`ALTCHA_EXPIRES_SECONDS=3600\` (so none expires during preparation). Attackers: ${fmt.int(attackers)} distinct addresses (10.x.y.z, through the trusted-proxy header), one wrong-password sign-in each for a different username, no device cookie: below every limit. ${fmt.int(paying)} of them fetched a challenge as their own address and solved it, before the attack (when the server still asked the base size); every ${REPLAY_EVERY}th (${fmt.int(attackers - paying)}) replayed a solution already spent. ${ATTACK_CONCURRENCY} attackers in flight at a time. Client and server share the machine's ${hashConcurrency} cores.`,
    "",
    `Two legitimate users, each with their own account and the right password, sign in side by side, each one sign-in every ${fmt.int(paceMs)} ms (or as soon as the previous one ends; the new device half a period after the known one, so that their sign-ins do not start together), ${idleSignIns} each on the idle server and then up to ${attackSignIns} each during the attack (until the attack's last answer): the **known device** signed in once before anything was measured and presents its newest device cookie on the challenge and the sign-in, keeping the new one from each success (the server revokes the old one); the **new device** never has a cookie. Each sign-in is what the page does: challenge, solve, post; after a 503 the user waits Retry-After and tries again, after a 500 or a bounce 1 s, up to ${MAX_TRIES_PER_SIGN_IN} tries; a 429 ends it. Each sign-in comes from a new address (its retries from the same one), so that the users' own per-username allowance (5 per 15 minutes per address) does not refuse them, and the server runs with \`RATE_LIMIT_KNOWN_DEVICE_LANE=${LANE_SETTINGS.RATE_LIMIT_KNOWN_DEVICE_LANE}\`: by default a username may use the owner's lane 10 times an hour, after which its known devices are served as untrusted clients (as the new device is here), and this drill's known device signs in ${1 + idleSignIns + attackSignIns} times in a few minutes. So the drill measures the attack's effect, not those limits. The previous run had one user, with no cookie, signing in back to back.`,
    "",
    "**The legitimate users**",
    "",
    table(
      [
        "User",
        "Phase",
        "Sign-ins",
        "Signed in on the first try",
        `Signed in within ${MAX_TRIES_PER_SIGN_IN} tries`,
        "First try: time to the server's answer (whatever it was), p50 / p99",
        "Until signed in p50 / p99 (incl. challenge, solve, retries)",
        "Answers (every try)",
        "Proof of work solved (mean, × the base size's mean)",
      ],
      [
        userRow("Known device", "Idle server", ki),
        userRow("Known device", "During the attack", ka),
        userRow("New device", "Idle server", fi),
        userRow("New device", "During the attack", fa),
        beforeRow("Idle server", BEFORE.idle),
        beforeRow("During the attack", BEFORE.attack),
      ],
    ),
    "",
    `- ${ratioLine("Known device", ki, ka, { maxP99Ratio: 2 })} Its p99 under attack against the previous run's user: ${fmt.ms(ka.postP99)} vs ${fmt.ms(BEFORE.attack.postP99)}.`,
    `- ${ratioLine("New device", fi, fa)} Against the previous run's user: p99 ${fmt.ms(fa.postP99)} vs ${fmt.ms(BEFORE.attack.postP99)}; signed in within ${MAX_TRIES_PER_SIGN_IN} tries ${fa.signedIn}/${fa.runs} vs ${BEFORE.attack.signedIn}/${BEFORE.attack.runs}.`,
    `- Server log: successful sign-ins in the trusted lane ${fmt.int(trustedIdle)} while idle (of ${ki.signedIn} by the known device) and ${fmt.int(trustedSucceeded)} during the attack (of ${ka.signedIn}); in the untrusted lane during the attack ${fmt.int(untrustedSucceeded)} (of ${fa.signedIn} by the new device). Successes of the known device that did not rotate its cookie: ${fmt.int(notRotated)}. Known-device sign-ins the server moved to the untrusted lane (\`device_lane_declined\`): ${fmt.int(laneDeclined)}.`,
    `- Slowest first answers of the known device (a p99 of ${ka.runs} sign-ins is its slowest one): idle ${slowest(knownIdle)}; during the attack ${slowest(knownAttack)}.`,
    `- The attack's answers ended ${fmt.fixed(attackSeconds, 1)} s after it began; the last legitimate sign-in of that phase ended ${fmt.fixed((lastLegitEndMs - attackEndedMs) / 1000, 1)} s after the attack's last answer.`,
    "",
    "**The attack**",
    "",
    table(
      ["", "This run", "Previous run (before known devices; 2 × AMD EPYC)"],
      [
        [
          "Addresses used / attempts answered",
          `${fmt.int(used)} / ${fmt.int(attempts.length)} in ${fmt.fixed(attackSeconds, 1)} s (${fmt.int(attempts.length / attackSeconds)}/s)${used < attackers ? ` (stopped at the ${maxAttackMs / 1000} s bound)` : ""}`,
          BEFORE.attackRows.used,
        ],
        ...[...byKind.entries()]
          .sort((a, b) => b[1] - a[1])
          .map(([label, n]) => [
            `Answered ${label}`,
            fmt.int(n),
            label.startsWith("503")
              ? BEFORE.attackRows.busy
              : label.startsWith("401")
                ? BEFORE.attackRows.invalid
                : label.includes("replayed")
                  ? BEFORE.attackRows.replayed
                  : "",
          ]),
        [
          "Reached Argon2id (server log: `sign_in_failed`)",
          `**${fmt.int(reachedArgon2)}** (${fmt.fixed(reachedArgon2 / attackSeconds, 1)}/s)`,
          BEFORE.attackRows.reached,
        ],
        [
          "Hash budget: refused with 503 busy",
          `${fmt.int(busy)} (${fmt.fixed((100 * busy) / Math.max(1, attempts.length), 1)}% of attempts)`,
          BEFORE.attackRows.busyShare,
        ],
        ...(serverErrors.length > 0 ? [["Server errors logged during the attack", fmt.int(serverErrors.length), ""]] : []),
        [
          `Hash budget: admitted attempts in flight (client-side estimate; ${untrustedSlots} untrusted slot(s) run, the rest wait in the untrusted queue of 8)`,
          `mean ${fmt.fixed(inFlight.mean, 1)}, max ${fmt.int(inFlight.max)}; queue ≈ mean ${fmt.fixed(Math.max(0, inFlight.mean - untrustedSlots), 1)}, max ${fmt.int(Math.max(0, inFlight.max - untrustedSlots))}`,
          BEFORE.attackRows.inFlight,
        ],
        [
          "ALTCHA: refused (replayed or otherwise invalid), before any database or Argon2id work",
          fmt.int(captchaRefused),
          BEFORE.attackRows.replayed,
        ],
        [
          `ALTCHA: the attacker's proof of work at this bench's size (${fmt.int(BENCH_ALTCHA_MAX_COUNTER)})`,
          `${fmt.int(paying)} solutions (+ challenge fetches) in ${fmt.fixed(prepareMs / 1000, 1)} s, ${fmt.fixed(prepareCpuMs / 1000, 1)} CPU-s in the bench process`,
          BEFORE.attackRows.prepare,
        ],
        [
          `ALTCHA: the same at the default size (${fmt.int(DEFAULT_ALTCHA_MAX_COUNTER)}), measured here`,
          `${fmt.ms(defaultSolveMs)} per solution: ${fmt.fixed((defaultSolveMs * attackers) / 1000 / 60, 1)} CPU-minutes for ${fmt.int(attackers)} attempts`,
          BEFORE.attackRows.defaultSize,
        ],
      ],
    ),
    "",
    "The queue length is not exported by the server, so it is estimated from the client side: at each 10 ms the number of attacker requests that were later answered after Argon2id and were still open, minus the slots that run. It includes the few milliseconds those requests spend in the layers before and after the hash budget, so it is an upper estimate.",
    "",
    `The attackers solved their challenges before the attack, at the base size: a challenge stays valid for ALTCHA_EXPIRES_SECONDS (300 s by default, 3600 s here), so solutions can be stockpiled in a calm moment; once the attack raises the pressure, the server refuses those solved below the level it then asks (\`too_easy\` in the table above) as it refuses a replay, before any database or Argon2id work. A fresh address asking during the attack gets what the new device got (its proof-of-work column); the cost per level is in part 7.`,
    ...(sentBack > 0
      ? [
          "",
          `**Found: sign-ins refused by next-auth's CSRF check.** ${fmt.int(sentBack)} sign-in answer(s) were a CSRF refusal (403 csrf_invalid, or next-auth's \`?csrf=true\` bounce), although each carried the CSRF cookie and token it had been given (the attackers share one pair, each legitimate user has its own).`,
        ]
      : []),
  ].join("\n");
  return {
    markdown,
    headlines: [
      `Distributed spray (one guess per username, not an attack on one owner: see part 11), ${fmt.int(used)} addresses below their limits: the known-device user signed in ${ka.firstTry}/${ka.runs} times on the first try (previous run's user without a cookie: ${BEFORE.attack.firstTry}/${BEFORE.attack.runs}), first answer p99 ${fmt.ms(ki.postP99)} idle → ${fmt.ms(ka.postP99)} under attack (${fmt.ratio(ka.postP99 / ki.postP99)}; before: 77.5 ms → 588 ms); the new-device user ${fa.signedIn}/${fa.runs} within ${MAX_TRIES_PER_SIGN_IN} tries (${fa.firstTry} on the first), p99 ${fmt.ms(fi.postP99)} → ${fmt.ms(fa.postP99)}; hash budget answered ${fmt.int(busy)} × 503${serverErrorAnswers > 0 ? ` and ${fmt.int(serverErrorAnswers)} × 500` : ""}, ALTCHA refused ${fmt.int(captchaRefused)} (replayed, or solved below the level the pressure asked), ${fmt.int(reachedArgon2)} attempts reached Argon2id (${fmt.fixed(reachedArgon2 / attackSeconds, 1)}/s; before: 3,962, 36.9/s)`,
    ],
  };
}

export const distributedPart: Part = {
  id: "distributed",
  title: PART_TITLES.distributed,
  serverSettings: () => LANE_SETTINGS,
  run(context: PartContext): Promise<PartReport> {
    return context.withServer((server) => drill(context, server));
  },
};

import os from "node:os";
import { issueChallenge } from "@/lib/captcha/altcha";
import { solve } from "@/tests/helpers/altcha";
import { getCsrf, register, signIn, solvedPayload, type Csrf, type SignInOutcome } from "../lib/http";
import { PART_TITLES, type Part, type PartContext, type PartReport } from "../lib/part";
import { DRILL_SETTINGS, type BenchServer } from "../lib/server";
import { fmt, sleep, summarize, table } from "../lib/stats";

/**
 * Part 3: a distributed attack. Each of many client addresses (named through the trusted-proxy
 * header) makes one wrong-password sign-in, well below every per-address and per-username limit,
 * so the limiter cannot tell it from a person. Meanwhile one legitimate user signs in again and
 * again. What is left to protect the server is ALTCHA (each attempt costs the attacker a
 * proof of work, and a solution is spent on first use) and the hash budget (Argon2id at most
 * HASH_CONCURRENCY at once, HASH_QUEUE waiting, 503 beyond).
 */

const LEGIT_EMAIL = "legit.user@example.com";
const LEGIT_PASSWORD = "correct horse battery staple";
// Every fifth attacker replays a solution that was already spent instead of paying for a new one.
const REPLAY_EVERY = 5;
const ATTACK_CONCURRENCY = 16;
const PREPARE_CONCURRENCY = 8;
const MAX_TRIES_PER_SIGN_IN = 10;
const DEFAULT_ALTCHA_MAX_COUNTER = 100_000;
const BENCH_ALTCHA_MAX_COUNTER = Number(DRILL_SETTINGS.ALTCHA_MAX_COUNTER);

/** 10.a.b.c for attacker n: distinct, valid, and not one of the bench's other ranges. */
function attackerAddress(n: number): string {
  const value = n + 1;
  return `10.${(value >> 16) & 255}.${(value >> 8) & 255}.${value & 255}`;
}

/**
 * The legitimate user's address for its n-th sign-in, from a carrier-grade NAT pool (100.64/10).
 * A new one per sign-in, so that dozens of sign-ins in a row are not refused by the user's own
 * per-username limit (5 per 15 min): this drill measures the attack's effect, not that limit.
 */
function legitAddress(n: number): string {
  return `100.64.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
}

/** How an answer is listed in the tables. */
function answerLabel(outcome: SignInOutcome): string {
  switch (outcome.kind) {
    case "signed-in":
      return "200 signed in";
    case "invalid":
      return "401 wrong password (after Argon2id)";
    case "captcha_invalid":
      return `400 captcha_invalid (${outcome.reason ?? "?"})`;
    case "busy":
      return "503 busy (hash budget full)";
    case "server_error":
      return `${outcome.status} server error`;
    case "other":
      return outcome.status === 200 && outcome.reason?.includes("csrf=true") ? "200 sent back to the sign-in page by next-auth (?csrf=true)" : `${outcome.status} ${outcome.reason ?? "unexpected"}`;
    default:
      return `${outcome.status} ${outcome.kind}`;
  }
}

type LegitSignIn = { totalMs: number; firstPostMs: number; tries: number; setbacks: string[]; outcome: string; signedIn: boolean };

/**
 * One sign-in as the page does it: challenge, solve, post. After a 503 the page counts down
 * Retry-After and the user tries again; after any other failure (a 500, a bounce back to the
 * sign-in page) the user is assumed to try again a second later. Bounded by MAX_TRIES_PER_SIGN_IN.
 */
async function legitSignIn(baseUrl: string, csrf: Csrf, n: number): Promise<LegitSignIn> {
  const startedMs = performance.now();
  let firstPostMs = Number.NaN;
  const setbacks: string[] = [];
  for (let tries = 1; ; tries++) {
    const address = legitAddress(n);
    const altcha = await solvedPayload(baseUrl, address);
    const outcome = await signIn(baseUrl, { address, csrf, email: LEGIT_EMAIL, password: LEGIT_PASSWORD, altcha });
    if (tries === 1) firstPostMs = outcome.ms;
    const retryable = outcome.kind === "busy" || outcome.kind === "server_error" || outcome.kind === "other";
    if (!retryable || tries >= MAX_TRIES_PER_SIGN_IN) {
      return { totalMs: performance.now() - startedMs, firstPostMs, tries, setbacks, outcome: answerLabel(outcome), signedIn: outcome.kind === "signed-in" };
    }
    setbacks.push(answerLabel(outcome));
    await sleep((outcome.retryAfterSeconds || 1) * 1000);
  }
}

function tally(labels: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const label of labels) counts.set(label, (counts.get(label) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([label, n]) => `${label}: ${fmt.int(n)}`)
    .join("; ");
}

type AttackAttempt = SignInOutcome & { replay: boolean };

/** Mean and largest number of intervals open at once, sampled every `stepMs`. */
function concurrency(intervals: readonly { startedMs: number; endedMs: number }[], fromMs: number, toMs: number, stepMs = 10): { mean: number; max: number } {
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

/** Runs `worker` over 0..count-1 with `parallel` at a time, stopping new work after `deadlineMs`. */
async function pool(count: number, parallel: number, deadlineMs: number, worker: (index: number) => Promise<void>): Promise<number> {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count && Date.now() < deadlineMs) await worker(next++);
    }),
  );
  return Math.min(next, count);
}

/** What a solution costs at the default proof-of-work size, measured here (the attacker's bill). */
async function solveCostMs(maxCounter: number, samples: number): Promise<number> {
  const settings = { hmacSecret: "bench-altcha-secret-".padEnd(40, "x"), expiresSeconds: 300, maxCounter };
  await solve(await issueChallenge(settings, Date.now()));
  const startedMs = performance.now();
  for (let i = 0; i < samples; i++) await solve(await issueChallenge(settings, Date.now()));
  return (performance.now() - startedMs) / samples;
}

function legitRows(label: string, runs: readonly LegitSignIn[]): { row: string[]; totalP50: number; totalP99: number; postP50: number; postP99: number; failed: number } {
  // "Until signed in" counts only sign-ins that ended signed in.
  const total = summarize(runs.filter((run) => run.signedIn).map((run) => run.totalMs));
  const post = summarize(runs.map((run) => run.firstPostMs));
  const setbacks = runs.flatMap((run) => run.setbacks);
  const failed = runs.filter((run) => !run.signedIn);
  return {
    row: [
      label,
      fmt.int(runs.length),
      `${fmt.ms(post.p50)} / ${fmt.ms(post.p99)}`,
      `${fmt.ms(total.p50)} / ${fmt.ms(total.p99)} (${fmt.int(total.count)} signed in)`,
      setbacks.length === 0 ? "0" : `${fmt.int(setbacks.length)} in ${fmt.int(runs.filter((run) => run.setbacks.length > 0).length)} sign-in(s): ${tally(setbacks)}`,
      failed.length === 0 ? "0" : `${fmt.int(failed.length)} (last answer: ${tally(failed.map((run) => run.outcome))})`,
    ],
    totalP50: total.p50,
    totalP99: total.p99,
    postP50: post.p50,
    postP99: post.p99,
    failed: failed.length,
  };
}

async function drill(context: PartContext, server: BenchServer): Promise<PartReport> {
  const attackers = context.smoke ? 60 : 10_000;
  const idleSignIns = context.smoke ? 3 : 30;
  const maxAttackMs = context.smoke ? 15_000 : 240_000;
  const baseUrl = server.baseUrl;

  const registered = await register(baseUrl, "100.127.0.1", LEGIT_EMAIL, LEGIT_PASSWORD);
  if (registered.status !== 201) throw new Error(`registering the legitimate user answered ${registered.status}: ${registered.text}`);
  const legitCsrf = await getCsrf(baseUrl);
  const attackCsrf = await getCsrf(baseUrl);

  context.say(`idle: ${idleSignIns} sign-ins of the legitimate user`);
  const idle: LegitSignIn[] = [];
  for (let n = 0; n < idleSignIns; n++) idle.push(await legitSignIn(baseUrl, legitCsrf, n));

  // Preparation (not part of the attack window): every paying attacker fetches a challenge as its
  // own address and solves it; the replayers get one solution that is spent right here.
  context.say(`preparing ${fmt.int(attackers)} attackers (challenges fetched as each address, solved by the bench)`);
  const spent = await solvedPayload(baseUrl, "100.127.0.2");
  await signIn(baseUrl, { address: "100.127.0.2", csrf: attackCsrf, email: "spent@example.com", password: "wrong-password-123", altcha: spent });
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

  context.say(`attack: ${fmt.int(attackers)} addresses, ${ATTACK_CONCURRENCY} at a time, while the legitimate user signs in`);
  const failedBefore = server.eventCount("sign_in_failed");
  const errorsBefore = server.errorLines().length;
  const succeededBefore = server.eventCount("sign_in_succeeded");
  const attempts: AttackAttempt[] = [];
  let attackDone = false;
  const attackStartedMs = performance.now();
  const deadlineMs = Date.now() + maxAttackMs;
  const attack = pool(attackers, ATTACK_CONCURRENCY, deadlineMs, async (i) => {
    const outcome = await signIn(baseUrl, { address: attackerAddress(i), csrf: attackCsrf, email: `victim-${i}@example.com`, password: `guess-${i}-Summer2026!`, altcha: payloads[i]! });
    attempts.push({ ...outcome, replay: payloads[i] === spent });
  }).finally(() => (attackDone = true));
  const underAttack: LegitSignIn[] = [];
  const legit = (async () => {
    for (let n = idleSignIns; !attackDone && n < idleSignIns + 1_000; n++) underAttack.push(await legitSignIn(baseUrl, legitCsrf, n));
  })();
  const used = await attack;
  const attackEndedMs = performance.now();
  await legit;
  // Attempts already admitted finish their Argon2id after the last answer to the attackers.
  await server.waitForEvents("sign_in_failed", failedBefore + attempts.filter((attempt) => attempt.kind === "invalid").length, 30_000);
  const reachedArgon2 = server.eventCount("sign_in_failed") - failedBefore;
  const legitSucceeded = server.eventCount("sign_in_succeeded") - succeededBefore;
  const attackSeconds = (attackEndedMs - attackStartedMs) / 1000;

  const byKind = new Map<string, number>();
  for (const attempt of attempts) byKind.set(answerLabel(attempt), (byKind.get(answerLabel(attempt)) ?? 0) + 1);
  const sentBack = attempts.filter((attempt) => answerLabel(attempt).includes("csrf=true")).length + [...idle, ...underAttack].flatMap((run) => [...run.setbacks, run.outcome]).filter((label) => label.includes("csrf=true")).length;
  const busy = attempts.filter((attempt) => attempt.kind === "busy").length;
  const serverErrorAnswers = attempts.filter((attempt) => attempt.kind === "server_error").length;
  const captchaRefused = attempts.filter((attempt) => attempt.kind === "captcha_invalid").length;
  const admitted = attempts.filter((attempt) => attempt.kind === "invalid");
  const inFlight = concurrency(admitted, attackStartedMs, attackEndedMs);
  const hashConcurrency = os.availableParallelism();
  const serverErrors = server.errorLines().slice(errorsBefore);
  // The message of HashBudgetFull: a hash-budget refusal that reached the client as a 500, not a 503.
  const budgetErrors = serverErrors.filter((line) => line.includes("Too many password checks")).length;
  if (serverErrors.length > 0) context.say(`server logged ${serverErrors.length} error line(s), e.g.:\n${serverErrors.slice(0, 3).join("\n")}`);
  const defaultSolveMs = await solveCostMs(DEFAULT_ALTCHA_MAX_COUNTER, context.smoke ? 1 : 10);

  const idleRow = legitRows("Idle server", idle);
  const attackRow = legitRows("During the attack", underAttack);
  const markdown = [
    `Server: \`node server.mjs\`, production build, fresh PGlite database, default limits and hash budget (HASH_CONCURRENCY = ${hashConcurrency} CPUs, HASH_QUEUE = 8), \`ALTCHA_MAX_COUNTER=${BENCH_ALTCHA_MAX_COUNTER}\` (so the bench can pay for ${fmt.int(paying)} proofs of work) and \`ALTCHA_EXPIRES_SECONDS=3600\` (so none expires during preparation). Attackers: ${fmt.int(attackers)} distinct addresses (10.x.y.z, through the trusted-proxy header), one wrong-password sign-in each for a different username: below every limit. ${fmt.int(paying)} of them fetched a challenge as their own address and solved it; every ${REPLAY_EVERY}th (${fmt.int(attackers - paying)}) replayed a solution already spent. ${ATTACK_CONCURRENCY} attackers in flight at a time. The legitimate user signs in with the right password, one sign-in after another (challenge, solve, post; after a 503 it waits Retry-After and tries again, after any other failure 1 s, up to ${MAX_TRIES_PER_SIGN_IN} tries), from a new address for each sign-in (its tries again come from the same one, so they spend its own per-username allowance of 5 per 15 minutes, as a real user's would). Client and server share the machine's ${hashConcurrency} cores.`,
    "",
    "**The legitimate user**",
    "",
    table(["", "Sign-ins", "First try: time to the server's answer (whatever it was), p50 / p99", "Until signed in p50 / p99 (incl. challenge, solve, retries)", "Tries that failed and were tried again", `Not signed in after ${MAX_TRIES_PER_SIGN_IN} tries`], [idleRow.row, attackRow.row]),
    "",
    `Under attack ÷ idle: first answer p50 ${fmt.ratio(attackRow.postP50 / idleRow.postP50)}, p99 ${fmt.ratio(attackRow.postP99 / idleRow.postP99)}; until signed in p50 ${fmt.ratio(attackRow.totalP50 / idleRow.totalP50)}, p99 ${fmt.ratio(attackRow.totalP99 / idleRow.totalP99)}. Successful verifications logged by the server during the attack: ${fmt.int(legitSucceeded)}.`,
    "",
    "**The attack**",
    "",
    table(
      ["", "Value"],
      [
        ["Addresses used / attempts answered", `${fmt.int(used)} / ${fmt.int(attempts.length)} in ${fmt.fixed(attackSeconds, 1)} s (${fmt.int(attempts.length / attackSeconds)}/s)${used < attackers ? ` (stopped at the ${maxAttackMs / 1000} s bound)` : ""}`],
        ...[...byKind.entries()].sort((a, b) => b[1] - a[1]).map(([label, n]) => [`Answered ${label}`, fmt.int(n)]),
        ["Reached Argon2id (server log: `sign_in_failed`)", `**${fmt.int(reachedArgon2)}** (${fmt.fixed(reachedArgon2 / attackSeconds, 1)}/s)`],
        ["Hash budget: refused with 503 busy", `${fmt.int(busy)} (${fmt.fixed((100 * busy) / Math.max(1, attempts.length), 1)}% of attempts)`],
        ...(serverErrors.length > 0 ? [["Server errors logged during the attack", `${fmt.int(serverErrors.length)}${budgetErrors > 0 ? `, of them HashBudgetFull ("Too many password checks…"): ${fmt.int(budgetErrors)}` : ""}`]] : []),
        [`Hash budget: admitted attempts in flight (client-side estimate; ${hashConcurrency} run, the rest wait in the queue of 8)`, `mean ${fmt.fixed(inFlight.mean, 1)}, max ${fmt.int(inFlight.max)}; queue ≈ mean ${fmt.fixed(Math.max(0, inFlight.mean - hashConcurrency), 1)}, max ${fmt.int(Math.max(0, inFlight.max - hashConcurrency))}`],
        ["ALTCHA: refused (replayed or otherwise invalid), before any database or Argon2id work", fmt.int(captchaRefused)],
        [`ALTCHA: the attacker's proof of work at this bench's size (${fmt.int(BENCH_ALTCHA_MAX_COUNTER)})`, `${fmt.int(paying)} solutions (+ challenge fetches) in ${fmt.fixed(prepareMs / 1000, 1)} s, ${fmt.fixed(prepareCpuMs / 1000, 1)} CPU-s in the bench process`],
        [`ALTCHA: the same at the default size (${fmt.int(DEFAULT_ALTCHA_MAX_COUNTER)}), measured here`, `${fmt.ms(defaultSolveMs)} per solution: ${fmt.fixed((defaultSolveMs * attackers) / 1000 / 60, 1)} CPU-minutes for ${fmt.int(attackers)} attempts`],
      ],
    ),
    "",
    "The queue length is not exported by the server, so it is estimated from the client side: at each 10 ms the number of attacker requests that were later answered after Argon2id and were still open, minus the slots that run. It includes the few milliseconds those requests spend in the layers before and after the hash budget, so it is an upper estimate.",
    ...(budgetErrors > 0
      ? ["", `**Found: the hash budget's refusal reaches clients as a 500.** The budget refused ${fmt.int(budgetErrors)} times (the server logged each HashBudgetFull as an unhandled error) and the route answered 500, not 503 busy with Retry-After. In the production build the route's \`instanceof HashBudgetFull\` test fails: the gatehouse object is built once (by instrumentation) and shared through globalThis, while the route handler's bundle holds its own copy of the HashBudgetFull class.`]
      : []),
    ...(sentBack > 0
      ? ["", `**Found: queued sign-ins are checked against another client's cookies.** next-auth sent ${fmt.int(sentBack)} sign-in(s) back to the sign-in page with \`?csrf=true\`, although each carried the CSRF cookie and token it had been given (the attackers share one pair, the legitimate user has its own). Such a sign-in had waited in the hash budget's queue: cockatiel's bulkhead starts queued work from the promise chain of the request that freed the slot, so it runs in that request's async context, and next-auth reads \`cookies()\` and \`headers()\` from that context.`]
      : []),
  ].join("\n");
  return {
    markdown,
    headlines: [
      `Distributed attack, ${fmt.int(used)} addresses below their limits: the legitimate user's first sign-in answer p50 ${fmt.ms(idleRow.postP50)} idle → ${fmt.ms(attackRow.postP50)} under attack (${fmt.ratio(attackRow.postP50 / idleRow.postP50)}), p99 ${fmt.ms(idleRow.postP99)} → ${fmt.ms(attackRow.postP99)} (${fmt.ratio(attackRow.postP99 / idleRow.postP99)}); ${fmt.int(underAttack.length - attackRow.failed)} of ${fmt.int(underAttack.length)} sign-ins under attack succeeded within ${MAX_TRIES_PER_SIGN_IN} tries; hash budget answered ${fmt.int(busy)} × 503${serverErrorAnswers > 0 ? ` and ${fmt.int(serverErrorAnswers)} × 500` : ""}, ALTCHA refused ${fmt.int(captchaRefused)} replays, ${fmt.int(reachedArgon2)} attempts reached Argon2id (${fmt.fixed(reachedArgon2 / attackSeconds, 1)}/s)`,
    ],
  };
}

export const distributedPart: Part = {
  id: "distributed",
  title: PART_TITLES.distributed,
  run(context: PartContext): Promise<PartReport> {
    return context.withServer((server) => drill(context, server));
  },
};

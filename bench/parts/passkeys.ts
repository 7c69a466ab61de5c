import os from "node:os";
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import { decode } from "next-auth/jwt";
import { sessionFormToken } from "@/lib/http/form-token";
import { solve } from "@/tests/helpers/altcha";
import { softAuthenticator, type SoftPasskey } from "@/tests/helpers/webauthn";
import {
  getChallenge,
  getCsrf,
  jsonOf,
  register,
  request,
  SIGN_IN_PATH,
  signIn,
  signInBody,
  signInHeaders,
  solvedPayload,
  type Csrf,
  type Reply,
  type SignInOutcome,
} from "../lib/http";
import { answerLabel, tally } from "../lib/legit";
import { PART_TITLES, type Part, type PartContext, type PartReport } from "../lib/part";
import type { BenchServer } from "../lib/server";
import { fmt, median, pool, sleep, summarize, table } from "../lib/stats";

/**
 * Part 10: passkeys beside passwords, on one server in one run.
 *
 * 1. Server CPU per sign-in: blocks of password sign-ins (challenge, solve, post: Argon2id at
 *    OWASP's parameters) and of passkey sign-ins (options, sign with a software authenticator,
 *    post) for the same account, alternating round after round, each block measured from the
 *    server process's CPU time (/proc/<pid>/stat utime + stime). So drift on a shared machine
 *    hits both kinds alike, and the ratio is taken per round.
 * 2. The owner's passkey during the 10,000-address drill: rounds of an idle block (the owner signs
 *    in with the passkey, paced) and an attack block (a slice of the 10,000 addresses, one
 *    wrong-password sign-in each: every other one for the owner's username, which strangers thus
 *    keep locked, the rest for a username each, which keeps the hash budget full, as in part 3),
 *    the owner signing in with the passkey at the same pace throughout. Ratios are per round.
 */

const OWNER_EMAIL = "passkey.owner@example.com";
const OWNER_PASSWORD = "correct horse battery staple";
const ATTACK_CONCURRENCY = 16;
const PREPARE_CONCURRENCY = 8;
// After a block, work the server does once it has answered (events, notices) lands in that block.
const SETTLE_MS = 300;
// Tries per owner sign-in: only the first counts for "first try"; the rest say whether it got in at all.
const MAX_TRIES = 3;
const P99_GOAL_RATIO = 1.5;
const CPU_GOAL_RATIO = 0.3;

type Sizes = {
  cpuRounds: number;
  passwordsPerRound: number;
  passkeysPerRound: number;
  drillRounds: number;
  idlePerRound: number;
  attackers: number;
  ownerPaceMs: number;
  maxAttackBlockMs: number;
};

function sizes(smoke: boolean): Sizes {
  return smoke
    ? {
        cpuRounds: 2,
        passwordsPerRound: 2,
        passkeysPerRound: 4,
        drillRounds: 2,
        idlePerRound: 3,
        attackers: 40,
        ownerPaceMs: 100,
        maxAttackBlockMs: 5_000,
      }
    : {
        cpuRounds: 8,
        passwordsPerRound: 15,
        passkeysPerRound: 45,
        drillRounds: 4,
        idlePerRound: 25,
        attackers: 10_000,
        ownerPaceMs: 250,
        maxAttackBlockMs: 120_000,
      };
}

/** 10.100–115.x.y for attacker n: a new address for each, apart from the other drills' ranges. */
function attackerAddress(n: number): string {
  const value = n + 1;
  return `10.${100 + ((value >> 16) & 15)}.${(value >> 8) & 255}.${value & 255}`;
}

/** The owner's sign-ins come from a CGNAT pool, a new address each (100.80.x.y password, 100.81.x.y passkey), so no per-address limit refuses it. */
function ownerAddress(pool: number, n: number): string {
  return `100.${80 + pool}.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;
}

function sessionCookieOf(reply: Reply): string | undefined {
  return (reply.headers["set-cookie"] ?? []).map((cookie) => cookie.split(";", 1)[0]!).find((pair) => /session-token=./.test(pair));
}

function refusalOf(reply: Reply): string {
  const body = jsonOf(reply);
  return [reply.status, body.error, body.reason].filter((part) => part !== undefined && part !== "").join(" ");
}

type Owner = { authenticator: ReturnType<typeof softAuthenticator>; passkey: SoftPasskey; passwordsUsed: number; passkeysUsed: number };

/** A post from the account page: the live session, same origin, the session's form token. */
async function accountPost(server: BenchServer, path: string, cookie: string, fields: Record<string, string>): Promise<Reply> {
  const claims = await decode({ token: cookie.slice(cookie.indexOf("=") + 1), secret: server.secret });
  if (typeof claims?.sid !== "string") throw new Error("the session cookie carries no sid");
  return request(server.baseUrl, {
    method: "POST",
    path,
    headers: {
      cookie,
      "content-type": "application/x-www-form-urlencoded",
      "sec-fetch-site": "same-origin",
      "x-forwarded-for": "100.127.3.2",
    },
    body: new URLSearchParams({ formToken: sessionFormToken(server.secret, claims.sid), ...fields }).toString(),
  });
}

/** Registers the owner, signs in with the password, and adds a passkey from the account page. */
async function ownerWithPasskey(server: BenchServer, csrf: Csrf): Promise<Owner> {
  const baseUrl = server.baseUrl;
  const registered = await register(baseUrl, "100.127.3.1", OWNER_EMAIL, OWNER_PASSWORD);
  if (![201, 202].includes(registered.status)) throw new Error(`registering the owner answered ${registered.status}: ${registered.text}`);
  const altcha = await solvedPayload(baseUrl, "100.127.3.2");
  const signedIn = await request(baseUrl, {
    method: "POST",
    path: SIGN_IN_PATH,
    headers: signInHeaders("100.127.3.2", csrf),
    body: signInBody({ email: OWNER_EMAIL, password: OWNER_PASSWORD, altcha, csrfToken: csrf.token }),
  });
  const cookie = sessionCookieOf(signedIn);
  if (!cookie) throw new Error(`the owner's password sign-in gave no session (${signedIn.status}: ${signedIn.text.slice(0, 200)})`);
  const asked = await accountPost(server, "/api/account/passkeys/options", cookie, { purpose: "register" });
  const options = jsonOf(asked).options as PublicKeyCredentialCreationOptionsJSON | undefined;
  if (asked.status !== 200 || !options) throw new Error(`registration options answered ${asked.status}: ${asked.text.slice(0, 200)}`);
  const authenticator = softAuthenticator({ origin: server.publicUrl });
  const { response, passkey } = await authenticator.register(options);
  const added = await accountPost(server, "/api/account/passkeys", cookie, { credential: JSON.stringify(response) });
  if (added.status !== 200) throw new Error(`adding the passkey answered ${added.status}: ${added.text.slice(0, 200)}`);
  return { authenticator, passkey, passwordsUsed: 0, passkeysUsed: 0 };
}

type PasskeyTry = { signedIn: boolean; label: string; /** options + sign-in answers; the bench's own signing left out */ ms: number };

/** One passkey sign-in as the page does it (no device cookie: a new browser each time). */
async function passkeySignIn(baseUrl: string, owner: Owner, address: string): Promise<PasskeyTry> {
  const headers = { "x-forwarded-for": address, "sec-fetch-site": "same-origin" };
  const asked = await request(baseUrl, { method: "POST", path: "/api/auth/passkey/options", headers });
  const options = jsonOf(asked).options as PublicKeyCredentialRequestOptionsJSON | undefined;
  if (asked.status !== 200 || !options) return { signedIn: false, label: `options: ${refusalOf(asked)}`, ms: asked.ms };
  const credential = await owner.authenticator.authenticate(owner.passkey, options);
  const answered = await request(baseUrl, {
    method: "POST",
    path: "/api/auth/passkey",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify({ credential, callbackUrl: "/" }),
  });
  const signedIn = answered.status === 200 && sessionCookieOf(answered) !== undefined;
  return { signedIn, label: signedIn ? "200 signed in" : refusalOf(answered), ms: asked.ms + answered.ms };
}

/** One password sign-in as the page does it: challenge, solve, post (a new device: no cookie). */
async function passwordSignIn(baseUrl: string, csrf: Csrf, address: string, password = OWNER_PASSWORD): Promise<SignInOutcome> {
  const altcha = await solve(await getChallenge(baseUrl, address));
  return signIn(baseUrl, { address, csrf, email: OWNER_EMAIL, password, altcha });
}

type OwnerRun = { first: PasskeyTry; tries: number; signedIn: boolean; labels: string[] };

/** A passkey sign-in tried up to MAX_TRIES times from one address, a second apart. */
async function ownerSignIn(baseUrl: string, owner: Owner): Promise<OwnerRun> {
  const address = ownerAddress(1, owner.passkeysUsed++);
  const labels: string[] = [];
  let first: PasskeyTry | undefined;
  for (let tries = 1; tries <= MAX_TRIES; tries++) {
    const attempt = await passkeySignIn(baseUrl, owner, address);
    first ??= attempt;
    labels.push(attempt.label);
    if (attempt.signedIn || tries === MAX_TRIES) return { first, tries, signedIn: attempt.signedIn, labels };
    await sleep(1_000);
  }
  throw new Error("unreachable: the loop returns on its last try");
}

/** Owner sign-ins every `paceMs` (or when the previous ends), at most `count`, until `stop()`. */
async function pacedOwner(baseUrl: string, owner: Owner, count: number, paceMs: number, stop: () => boolean): Promise<OwnerRun[]> {
  const runs: OwnerRun[] = [];
  const firstMs = performance.now();
  for (let n = 0; n < count && !stop(); n++) {
    await sleep(firstMs + n * paceMs - performance.now());
    if (stop()) break;
    runs.push(await ownerSignIn(baseUrl, owner));
  }
  return runs;
}

type CpuBlock = { kind: "password" | "passkey"; signIns: number; succeeded: number; cpuMs: number; wallMs: number; passwordChecks: number };

/** Password checks the server logged (each one Argon2id): successes and failures. */
const passwordChecks = (server: BenchServer) => server.eventCount("sign_in_succeeded") + server.eventCount("sign_in_failed");

async function cpuBlock(server: BenchServer, kind: CpuBlock["kind"], count: number, one: () => Promise<boolean>): Promise<CpuBlock> {
  await sleep(SETTLE_MS);
  const cpuBefore = server.cpuMs();
  const checksBefore = passwordChecks(server);
  const startedMs = performance.now();
  let succeeded = 0;
  for (let i = 0; i < count; i++) if (await one()) succeeded++;
  const wallMs = performance.now() - startedMs;
  await sleep(SETTLE_MS);
  return {
    kind,
    signIns: count,
    succeeded,
    cpuMs: server.cpuMs() - cpuBefore,
    wallMs,
    passwordChecks: passwordChecks(server) - checksBefore,
  };
}

type RangeStats = { median: number; min: number; max: number };
const range = (values: readonly number[]): RangeStats => ({ median: median(values), min: Math.min(...values), max: Math.max(...values) });
const ratioRange = (r: RangeStats) => `**${fmt.ratio(r.median)}** (${fmt.ratio(r.min)}–${fmt.ratio(r.max)})`;
const msRange = (r: RangeStats) => `**${fmt.ms(r.median)}** (${fmt.ms(r.min)}–${fmt.ms(r.max)})`;

type DrillRound = {
  idle: OwnerRun[];
  attack: OwnerRun[];
  attempts: (SignInOutcome & { owner: boolean })[];
  attackMs: number;
  reachedArgon2: number;
  /** The owner's password from a new device at the end of the attack block: what strangers' lock answers. */
  passwordDuringAttack: string;
};

async function run(context: PartContext, server: BenchServer): Promise<PartReport> {
  const size = sizes(context.smoke);
  const baseUrl = server.baseUrl;
  // What the server logged before this part (its start-up warnings, other parts in a smoke run) is not this part's.
  const errorsBefore = server.errorLines().length;
  const [ownerCsrf, attackCsrf] = [await getCsrf(baseUrl), await getCsrf(baseUrl)];
  const owner = await ownerWithPasskey(server, ownerCsrf);

  // Idle CPU of the server (timers, housekeeping): what a block measures besides its sign-ins.
  const idleCpuBefore = server.cpuMs();
  await sleep(context.smoke ? 300 : 2_000);
  const idleCpuMsPerSecond = ((server.cpuMs() - idleCpuBefore) * 1000) / (context.smoke ? 300 : 2_000);

  context.say(
    `CPU: ${size.cpuRounds} rounds of ${size.passwordsPerRound} password and ${size.passkeysPerRound} passkey sign-ins, alternating`,
  );
  const blocks: CpuBlock[] = [];
  const passwordBlock = () =>
    cpuBlock(
      server,
      "password",
      size.passwordsPerRound,
      async () => (await passwordSignIn(baseUrl, ownerCsrf, ownerAddress(0, owner.passwordsUsed++))).kind === "signed-in",
    );
  const passkeyBlock = () =>
    cpuBlock(
      server,
      "passkey",
      size.passkeysPerRound,
      async () => (await passkeySignIn(baseUrl, owner, ownerAddress(1, owner.passkeysUsed++))).signedIn,
    );
  // One unmeasured sign-in of each kind first: a route's first run loads and caches its code.
  await passwordSignIn(baseUrl, ownerCsrf, ownerAddress(0, owner.passwordsUsed++));
  await passkeySignIn(baseUrl, owner, ownerAddress(1, owner.passkeysUsed++));
  for (let round = 0; round < size.cpuRounds; round++) {
    const order = round % 2 === 0 ? [passwordBlock, passkeyBlock] : [passkeyBlock, passwordBlock];
    for (const block of order) blocks.push(await block());
  }
  const perSignIn = (block: CpuBlock) => block.cpuMs / block.signIns;
  const ofKind = (kind: CpuBlock["kind"]) => blocks.filter((block) => block.kind === kind);
  const cpuRatios = Array.from({ length: size.cpuRounds }, (_, round) => {
    const [a, b] = blocks.slice(2 * round, 2 * round + 2);
    const [password, passkey] = a!.kind === "password" ? [a!, b!] : [b!, a!];
    return perSignIn(passkey) / perSignIn(password);
  });
  const cpuRow = (kind: CpuBlock["kind"], label: string) => {
    const kindBlocks = ofKind(kind);
    const signIns = kindBlocks.reduce((sum, block) => sum + block.signIns, 0);
    const succeeded = kindBlocks.reduce((sum, block) => sum + block.succeeded, 0);
    return [
      label,
      `${fmt.int(succeeded)} / ${fmt.int(signIns)}`,
      msRange(range(kindBlocks.map(perSignIn))),
      fmt.ms(kindBlocks.reduce((sum, block) => sum + block.cpuMs, 0) / signIns),
      fmt.ms(median(kindBlocks.map((block) => block.wallMs / block.signIns))),
      fmt.int(kindBlocks.reduce((sum, block) => sum + block.passwordChecks, 0)),
    ];
  };
  const cpuRatio = range(cpuRatios);
  const passwordCpu = range(ofKind("password").map(perSignIn));
  const passkeyCpu = range(ofKind("passkey").map(perSignIn));

  // The drill: every attacker's proof of work is solved before the first round, as in part 3.
  context.say(`drill: preparing ${fmt.int(size.attackers)} attackers (a challenge per address, solved by the bench)`);
  const payloads: string[] = new Array<string>(size.attackers);
  const prepareStartedMs = performance.now();
  const prepared = await pool(size.attackers, PREPARE_CONCURRENCY, Date.now() + 10 * 60_000, async (i) => {
    payloads[i] = await solvedPayload(baseUrl, attackerAddress(i));
  });
  const prepareMs = performance.now() - prepareStartedMs;
  await sleep(1_000);

  const rounds: DrillRound[] = [];
  const perRound = Math.ceil(prepared / size.drillRounds);
  for (let round = 0; round < size.drillRounds; round++) {
    const from = round * perRound;
    const to = Math.min(prepared, from + perRound);
    context.say(
      `drill round ${round + 1}/${size.drillRounds}: ${size.idlePerRound} idle passkey sign-ins, then attackers ${from}–${to - 1}`,
    );
    const idle = await pacedOwner(baseUrl, owner, size.idlePerRound, size.ownerPaceMs, () => false);

    const attempts: DrillRound["attempts"] = [];
    const failedBefore = server.eventCount("sign_in_failed");
    let attackDone = false;
    const attackStartedMs = performance.now();
    const attack = pool(to - from, ATTACK_CONCURRENCY, Date.now() + size.maxAttackBlockMs, async (i) => {
      const n = from + i;
      const forOwner = n % 2 === 0;
      const outcome = await signIn(baseUrl, {
        address: attackerAddress(n),
        csrf: attackCsrf,
        email: forOwner ? OWNER_EMAIL : `passkey.victim-${n}@example.com`,
        password: `guess-${n}-Autumn2026!`,
        altcha: payloads[n]!,
      });
      attempts.push({ ...outcome, owner: forOwner });
    }).finally(() => (attackDone = true));
    // Let the first attackers lock the username and fill the budget before the owner's first try.
    await sleep(Math.min(500, size.ownerPaceMs * 2));
    // Bounded in count as well as by the attack's own deadline: at most one sign-in per pace over the block's limit.
    const during = await pacedOwner(
      baseUrl,
      owner,
      Math.ceil(size.maxAttackBlockMs / size.ownerPaceMs),
      size.ownerPaceMs,
      () => attackDone,
    );
    await attack;
    const attackMs = performance.now() - attackStartedMs;
    const lockCheck = await passwordSignIn(baseUrl, ownerCsrf, ownerAddress(0, owner.passwordsUsed++));
    // Admitted attempts finish their Argon2id after the last answer: the next idle block waits for them.
    await server.waitForEvents("sign_in_failed", failedBefore + attempts.filter((attempt) => attempt.kind === "invalid").length, 30_000);
    await sleep(1_000);
    rounds.push({
      idle,
      attack: during,
      attempts,
      attackMs,
      reachedArgon2: server.eventCount("sign_in_failed") - failedBefore,
      passwordDuringAttack: answerLabel(lockCheck),
    });
  }

  const firstMs = (runs: readonly OwnerRun[]) => summarize(runs.map((each) => each.first.ms));
  const firstTry = (runs: readonly OwnerRun[]) => runs.filter((each) => each.first.signedIn).length;
  const roundFigures = rounds.map((round) => {
    const idle = firstMs(round.idle);
    const attack = firstMs(round.attack);
    return { idle, attack, p50Ratio: attack.p50 / idle.p50, p99Ratio: attack.p99 / idle.p99 };
  });
  const allIdle = rounds.flatMap((round) => round.idle);
  const allAttack = rounds.flatMap((round) => round.attack);
  const p50Ratio = range(roundFigures.map((each) => each.p50Ratio));
  const p99Ratio = range(roundFigures.map((each) => each.p99Ratio));
  const pooledIdle = firstMs(allIdle);
  const pooledAttack = firstMs(allAttack);
  const attackFirstTry = firstTry(allAttack);
  const p99Met = roundFigures.filter((each) => each.p99Ratio <= P99_GOAL_RATIO).length;
  const cpuMet = cpuRatios.filter((ratio) => ratio <= CPU_GOAL_RATIO).length;
  const allAttempts = rounds.flatMap((round) => round.attempts);
  const attackSeconds = rounds.reduce((sum, round) => sum + round.attackMs, 0) / 1000;
  const reachedArgon2 = rounds.reduce((sum, round) => sum + round.reachedArgon2, 0);
  const errors = server.errorLines().slice(errorsBefore);

  const markdown = [
    `Server: \`node server.mjs\`, production build, fresh PGlite database, default limits, lockout and hash budget, Argon2id at OWASP's parameters, \`NEXTAUTH_URL=${server.publicUrl.replace(/\d+$/, "PORT")}\` (WebAuthn's RP ID must be a domain; the server listens on 127.0.0.1). One account, \`${OWNER_EMAIL}\`, with its password and one passkey added from the account page (a software authenticator, \`tests/helpers/webauthn.ts\`: ES256, user verification, a real signature over each challenge). Every sign-in below comes from a new client address (through the trusted-proxy header), with no device cookie (a new browser each time), so no per-address limit and no known-device lane is involved. **The machine's ${os.availableParallelism()} cores were shared with other sessions' work during the run** (the load average above): that is why every figure is a range over rounds that alternate, never a best run.`,
    "",
    "**Server CPU per sign-in**",
    "",
    `${size.cpuRounds} rounds, each a block of ${size.passwordsPerRound} password sign-ins (challenge, solve, post: the ALTCHA check, the limiter, the lockout check, Argon2id, the session) and a block of ${size.passkeysPerRound} passkey sign-ins (options, sign, post: the challenge, the signature check, the counter, the session), one after another, the order flipped every round, after one unmeasured sign-in of each kind. A block's CPU is the server process's user + system time (\`/proc/<pid>/stat\`, 10 ms ticks) from ${SETTLE_MS} ms before its first request to ${SETTLE_MS} ms after its last answer, so the work the server does once it has answered counts; the bench's own solving and signing run in the bench process and do not. The server idles at ${fmt.fixed(idleCpuMsPerSecond, 1)} ms of CPU per second, included in the figures.`,
    "",
    table(
      [
        "Sign-in",
        "Signed in",
        "Server CPU per sign-in: median of rounds (range)",
        "Pooled (all CPU ÷ all sign-ins)",
        "Wall time per sign-in, median of rounds",
        "Password checks the server logged",
      ],
      [cpuRow("password", "Password (Argon2id)"), cpuRow("passkey", "Passkey")],
    ),
    "",
    `Passkey ÷ password, per round: ${ratioRange(cpuRatio)} over ${size.cpuRounds} rounds (${cpuRatios.map((ratio) => fmt.fixed(ratio, 2)).join(", ")}). Goal ≤ ${CPU_GOAL_RATIO}×: **${cpuMet === size.cpuRounds ? "met in every round" : `met in ${cpuMet} of ${size.cpuRounds} rounds`}**.`,
    "",
    "**The owner's passkey during the 10,000-address drill**",
    "",
    `${fmt.int(prepared)} attacker addresses (10.100.x.y), each one wrong-password sign-in with its own proof of work (all solved before the first round, in ${fmt.fixed(prepareMs / 1000, 1)} s), ${ATTACK_CONCURRENCY} in flight: the even-numbered ones for the owner's username (after its first 5 failures the username is locked for strangers, and stays locked: each failure that gets through doubles the lock), the odd-numbered ones for a username of their own (each reaching Argon2id or the full hash budget's 503, as in part 3). ${size.drillRounds} rounds, each: ${size.idlePerRound} passkey sign-ins by the owner on the quiet server, one every ${size.ownerPaceMs} ms; then ${fmt.int(perRound)} of the attackers, the owner signing in with the passkey at the same pace from ${Math.min(500, size.ownerPaceMs * 2)} ms after the attack starts until its last answer; then the owner's password from a new device, once (what strangers' lock answers it); then a pause until the attack's admitted Argon2id work has finished. From the second round on, the idle blocks find the username still locked by the previous attack: the passkey does not care either way. Time: the options answer plus the sign-in answer on loopback (the bench's own signing left out); a failed try is tried again after 1 s, up to ${MAX_TRIES} times, but only the first try counts below. Percentiles are nearest-rank: the p99 of fewer than 100 sign-ins is the slowest.`,
    "",
    table(
      [
        "Round",
        "Idle: sign-ins, first try, p50 / p99",
        "Attack: sign-ins, first try, p50 / p99",
        "p50 attack ÷ idle",
        "p99 attack ÷ idle",
        "Attack block: attempts in, reached Argon2id",
        "Owner's password from a new device during the attack",
      ],
      rounds.map((round, i) => {
        const figures = roundFigures[i]!;
        return [
          String(i + 1),
          `${fmt.int(round.idle.length)}, ${firstTry(round.idle)}/${round.idle.length}, ${fmt.ms(figures.idle.p50)} / ${fmt.ms(figures.idle.p99)}`,
          `${fmt.int(round.attack.length)}, **${firstTry(round.attack)}/${round.attack.length}**, ${fmt.ms(figures.attack.p50)} / ${fmt.ms(figures.attack.p99)}`,
          fmt.ratio(figures.p50Ratio),
          `**${fmt.ratio(figures.p99Ratio)}**`,
          `${fmt.int(round.attempts.length)} in ${fmt.fixed(round.attackMs / 1000, 1)} s, ${fmt.int(round.reachedArgon2)}`,
          round.passwordDuringAttack,
        ];
      }),
    ),
    "",
    `- First try during the attack: **${fmt.int(attackFirstTry)}/${fmt.int(allAttack.length)}** (idle: ${fmt.int(firstTry(allIdle))}/${fmt.int(allIdle.length)}); answers of every try: ${tally(allAttack.flatMap((each) => each.labels))}. Goal, first try every time: **${attackFirstTry === allAttack.length && allAttack.length > 0 ? "met" : "not met"}**.`,
    `- Attack ÷ idle of the same round: p50 ${ratioRange(p50Ratio)}, p99 ${ratioRange(p99Ratio)} over ${size.drillRounds} rounds. Goal p99 ≤ ${P99_GOAL_RATIO}× idle: **${p99Met === size.drillRounds ? "met in every round" : `met in ${p99Met} of ${size.drillRounds} rounds`}**. Pooled over the rounds: idle p50 / p99 ${fmt.ms(pooledIdle.p50)} / ${fmt.ms(pooledIdle.p99)}, attack ${fmt.ms(pooledAttack.p50)} / ${fmt.ms(pooledAttack.p99)} (${fmt.ratio(pooledAttack.p50 / pooledIdle.p50)}, ${fmt.ratio(pooledAttack.p99 / pooledIdle.p99)}).`,
    `- The attack: ${fmt.int(allAttempts.length)} attempts in ${fmt.fixed(attackSeconds, 1)} s of attack blocks (${fmt.int(allAttempts.length / attackSeconds)}/s); for the owner's username: ${tally(allAttempts.filter((each) => each.owner).map(answerLabel))}; for the others: ${tally(allAttempts.filter((each) => !each.owner).map(answerLabel))}. Reached Argon2id (server log \`sign_in_failed\`): ${fmt.int(reachedArgon2)}.${errors.length > 0 ? ` Server error lines logged: ${fmt.int(errors.length)}, e.g. \`${errors[0]!.slice(0, 160)}\`.` : ""}`,
  ].join("\n");
  return {
    markdown,
    headlines: [
      `Passkeys: a passkey sign-in costs the server ${fmt.ms(passkeyCpu.median)} of CPU against ${fmt.ms(passwordCpu.median)} for the password (Argon2id), **${fmt.ratio(cpuRatio.median)}** (${fmt.ratio(cpuRatio.min)}–${fmt.ratio(cpuRatio.max)} over ${size.cpuRounds} rounds; goal ≤ ${CPU_GOAL_RATIO}×); during the ${fmt.int(prepared)}-address drill (the owner's username locked for strangers, the hash budget full) the owner signed in with the passkey ${fmt.int(attackFirstTry)}/${fmt.int(allAttack.length)} on the first try, p99 ${fmt.ratio(p99Ratio.median)} idle (${fmt.ratio(p99Ratio.min)}–${fmt.ratio(p99Ratio.max)} over ${size.drillRounds} rounds; goal ≤ ${P99_GOAL_RATIO}×), p50 ${fmt.ratio(p50Ratio.median)}`,
    ],
  };
}

export const passkeysPart: Part = {
  id: "passkeys",
  title: PART_TITLES.passkeys,
  publicHost: "localhost",
  run(context: PartContext): Promise<PartReport> {
    return context.withServer((server) => run(context, server));
  },
};

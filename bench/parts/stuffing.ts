import { randomBytes } from "node:crypto";
import { solve } from "@/tests/helpers/altcha";
import { startRangeServer } from "@/tests/helpers/range-server";
import {
  confirmDeviceByApi,
  getChallenge,
  getCsrf,
  register,
  signIn,
  solvedPayload,
  tokenSignIn,
  type Csrf,
  type TokenSignInOutcome,
} from "../lib/http";
import { tally } from "../lib/legit";
import { PART_TITLES, type Part, type PartContext, type PartReport } from "../lib/part";
import { Outbox } from "../lib/outbox";
import { DRILL_SETTINGS, startServer, type BenchServer } from "../lib/server";
import { fmt, pool, range, sleep, summarize, table } from "../lib/stats";

/**
 * Part 12: credential stuffing. The attacker holds a combo list for the site's accounts: for each
 * account a few passwords leaked elsewhere, the right one for some of them. Every pair is tried
 * once, each from an address of its own and without a device cookie, through the browser's
 * sign-in and the token API in turn, each with a solved ALTCHA: below every per-address and
 * per-username limit. Meanwhile every owner signs in once from a known device. The same drill runs
 * against one server per setup, in rounds whose order rotates, each round on fresh accounts (the
 * at-risk signal is a username's failures in the last 24 hours, so a second round on the same
 * accounts would start with every one of them at risk).
 *
 * A combo list is a breach corpus: by the time its pairs are replayed, its passwords are in the
 * range service. The drill stages that truthfully: a range server of its own (Pwned Passwords'
 * format) learns the list's passwords after the accounts were registered, as a breach becomes
 * known after the accounts it exposes were made, and the drill waits out the servers' range cache
 * (BREACHED_PASSWORDS_CACHE_SECONDS, short here) before anything is measured.
 */

type Mode = "off" | "at-risk" | "always";
/** A server's configuration: the confirmation's mode, and whether it asks the range server. */
type Setup = { mode: Mode; corpus: boolean };
const SETUPS: readonly Setup[] = [
  { mode: "off", corpus: true },
  { mode: "at-risk", corpus: false },
  { mode: "at-risk", corpus: true },
  { mode: "always", corpus: true },
];
const setupName = (setup: Setup): string => `${setup.mode}${setup.corpus ? " + corpus" : ", no corpus"}`;
// A day by default; seconds here, so that the wait after the leak is short.
const RANGE_CACHE_SECONDS = 3;

type Sizes = {
  accounts: number;
  rightPairs: number;
  /** Passwords per account in the attacker's list: accounts × this = addresses and attempts. */
  triesPerAccount: number;
  rounds: number;
  idleSignIns: number;
  attackConcurrency: number;
  setupConcurrency: number;
};

function sizes(smoke: boolean): Sizes {
  return smoke
    ? { accounts: 6, rightPairs: 2, triesPerAccount: 2, rounds: 1, idleSignIns: 2, attackConcurrency: 4, setupConcurrency: 3 }
    : { accounts: 200, rightPairs: 20, triesPerAccount: 5, rounds: 2, idleSignIns: 20, attackConcurrency: 8, setupConcurrency: 4 };
}

const MAX_TRIES_PER_SIGN_IN = 5;

type Channel = "browser" | "api";

/** 198.18.0.0/15 (RFC 2544, benchmarking): attacker attempt `n` of round `round`, a new address each. */
function attackerAddress(round: number, n: number): string {
  const value = round * 20_000 + n + 1;
  return `198.${18 + ((value >> 16) & 1)}.${(value >> 8) & 255}.${value & 255}`;
}

/** The owners' addresses, 100.80–95.x.y (CGNAT): one per sign-in, apart for registration, setup, idle and attack. */
function ownerAddress(round: number, phase: number, n: number): string {
  const value = n + 1;
  return `100.${80 + round * 4 + phase}.${(value >> 8) & 255}.${value & 255}`;
}

type Account = {
  email: string;
  password: string;
  /** The position of the right password in the attacker's list for this account, or null (all wrong). */
  rightAt: number | null;
  /** The attacker's passwords for this account, in the order tried (leaked elsewhere, or here). */
  list: string[];
  /** The owner's known device: its newest device token. */
  deviceToken?: string;
  /** The owner's channel (half sign in through the browser, half through the API). */
  channel: Channel;
};

/** One attacker pair's answer. */
type AttackAnswer = {
  account: number;
  position: number;
  right: boolean;
  channel: Channel;
  /** A session cookie or a token pair: the account is taken over. */
  taken: boolean;
  label: string;
  /** Posts it took (a 503 or a refused proof of work is tried again). */
  tries: number;
};

/** One owner sign-in: the first post's answer time, tries, and whether it got in. */
type OwnerRun = { firstPostMs: number; tries: number; signedIn: boolean; label: string };

type RoundResult = {
  setup: string;
  round: number;
  takenFirst: number;
  takenLater: number;
  rightAnswered: string;
  confirmationsForRight: number;
  idle: OwnerRun[];
  owners: OwnerRun[];
  mails: Map<string, number>;
  attackAnswers: string;
  /** Attacker pairs sent again after a 503 or a refused proof of work. */
  retried: number;
  attackSeconds: number;
  /** The server's CPU (process tree) from the attack's first pair to its last answer. */
  attackCpuSeconds: number;
  serverErrors: number;
  /** Breach look-ups that failed open (breach_check_unavailable, logged at most once per 10 s). */
  breachOutages: number;
  ownersAfterAttack: number;
};

function minusKinds(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [kind, n] of after) if (n - (before.get(kind) ?? 0) > 0) out.set(kind, n - (before.get(kind) ?? 0));
  return out;
}

const strongPassword = () => `pw-${randomBytes(15).toString("base64url")}`;

/**
 * The owner's device, before anything is measured: a sign-in through the token API from a new
 * device, and where the server asks for it (`always`), the mailed code read from the outbox.
 */
async function enrolDevice(server: BenchServer, outbox: Outbox, used: Set<string>, account: Account, address: string): Promise<void> {
  const altcha = await solvedPayload(server.baseUrl, address);
  const first = await tokenSignIn(server.baseUrl, { address, email: account.email, password: account.password, altcha });
  let done: TokenSignInOutcome = first;
  if (first.error === "device_confirmation_required" && first.confirmationToken) {
    const code = await outbox.code(account.email, used);
    done = await confirmDeviceByApi(server.baseUrl, address, first.confirmationToken, code);
  }
  if (done.kind !== "signed-in" || !done.deviceToken)
    throw new Error(`the owner's device sign-in for ${account.email} answered ${done.status} ${done.error ?? ""}`);
  account.deviceToken = done.deviceToken;
}

/**
 * One owner sign-in from the known device, through the owner's channel: challenge (with the
 * device, so the base size), solve, post; a 503 or 5xx is tried again after Retry-After, up to
 * MAX_TRIES_PER_SIGN_IN; anything else ends it.
 */
async function ownerSignIn(baseUrl: string, csrf: Csrf, account: Account, address: string): Promise<OwnerRun> {
  let firstPostMs = Number.NaN;
  for (let tries = 1; ; tries++) {
    const altcha = await solve(await getChallenge(baseUrl, address, account.deviceToken));
    const attempt = { address, email: account.email, password: account.password, altcha, deviceToken: account.deviceToken };
    let signedIn: boolean;
    let label: string;
    let retryAfterSeconds: number | undefined;
    let retry: boolean;
    let ms: number;
    if (account.channel === "browser") {
      const outcome = await signIn(baseUrl, { ...attempt, csrf });
      signedIn = outcome.kind === "signed-in";
      if (signedIn && outcome.deviceToken) account.deviceToken = outcome.deviceToken;
      label = `browser ${outcome.status}${outcome.reason && !signedIn ? ` ${outcome.reason}` : ""}`;
      retry = outcome.kind === "busy" || outcome.kind === "server_error";
      retryAfterSeconds = outcome.retryAfterSeconds;
      ms = outcome.ms;
    } else {
      const outcome = await tokenSignIn(baseUrl, attempt);
      // An owner whose password is in the corpus is let in only to choose a new one: the API
      // answers 403 password_change_required with the new device token (the browser opens its
      // session on the new-password page). That is the owner getting in, as the server means it.
      signedIn = outcome.kind === "signed-in" || (outcome.status === 403 && outcome.error === "password_change_required");
      if (signedIn && outcome.deviceToken) account.deviceToken = outcome.deviceToken;
      label = `API ${outcome.status}${outcome.error ? ` ${outcome.error}` : ""}`;
      retry = outcome.status === 503 || outcome.kind === "server_error";
      retryAfterSeconds = outcome.retryAfterSeconds;
      ms = outcome.ms;
    }
    if (tries === 1) firstPostMs = ms;
    if (!retry || tries >= MAX_TRIES_PER_SIGN_IN) return { firstPostMs, tries, signedIn, label: signedIn ? "signed in" : label };
    await sleep((retryAfterSeconds || 1) * 1000);
  }
}

/** A round's accounts, enrolled devices and the attacker's solved list, ready on one server. */
type Prepared = {
  server: BenchServer;
  setup: Setup;
  round: number;
  outbox: Outbox;
  accounts: Account[];
  pairs: { account: number; position: number }[];
};

/**
 * Setup is not measured: a request whose connection was reset (four servers on a loaded 2-core
 * machine) is sent again, once. (A taken address answers registration as a new one does.)
 */
async function onceMoreOnReset<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof Error) || !/socket hang up|ECONNRESET/.test(error.message)) throw error;
    await sleep(500);
    return work();
  }
}

/** Not measured: registration and each owner's device. */
async function prepareRound(context: PartContext, server: BenchServer, setup: Setup, round: number, size: Sizes): Promise<Prepared> {
  const baseUrl = server.baseUrl;
  const outbox = new Outbox(server.outboxDir);
  const usedCodes = new Set<string>();
  const tag = `${setup.mode}${setup.corpus ? "-corpus" : ""}.r${round}`;
  // Right pairs are spread evenly over the positions in the list: some tried first, some after failures.
  const accounts: Account[] = Array.from({ length: size.accounts }, (_, i) => {
    const password = strongPassword();
    const rightAt = i < size.rightPairs ? i % size.triesPerAccount : null;
    const list = Array.from({ length: size.triesPerAccount }, (_, position) => (position === rightAt ? password : strongPassword()));
    return { email: `stuffed-${tag}-${i}@example.com`, password, rightAt, list, channel: i % 2 === 0 ? "browser" : "api" };
  });

  context.say(`${tag}: registering ${size.accounts} accounts and enrolling each owner's device`);
  await pool(accounts.length, size.setupConcurrency, Date.now() + 10 * 60_000, async (i) => {
    const account = accounts[i]!;
    const reply = await onceMoreOnReset(() => register(baseUrl, ownerAddress(round, 0, i), account.email, account.password));
    if (![201, 202].includes(reply.status)) throw new Error(`registering ${account.email} answered ${reply.status}: ${reply.text}`);
    // Smoke only: one stranger's failure first, so the enrolment through a mailed code (which a
    // full run takes only with \`always\`) runs too.
    if (context.smoke && i === 0) {
      const address = ownerAddress(round, 1, size.accounts + i);
      const altcha = await solvedPayload(baseUrl, address);
      await tokenSignIn(baseUrl, { address, email: account.email, password: strongPassword(), altcha });
    }
    await onceMoreOnReset(() => enrolDevice(server, outbox, usedCodes, account, ownerAddress(round, 1, i)));
  });

  // The attacker's list, pass by pass: the first password of every account, then the second, …
  const pairs: { account: number; position: number }[] = [];
  for (let position = 0; position < size.triesPerAccount; position++)
    for (let account = 0; account < accounts.length; account++) pairs.push({ account, position });
  return { server, setup, round, outbox, accounts, pairs };
}

/** Measured: the idle sample, then the attack with every owner signing in meanwhile. */
async function attackRound(context: PartContext, prepared: Prepared, size: Sizes): Promise<RoundResult> {
  const { server, round, outbox, accounts, pairs } = prepared;
  const baseUrl = server.baseUrl;
  const tag = `${setupName(prepared.setup)}, round ${round + 1}`;
  const ownerCsrf = await getCsrf(baseUrl);
  const attackCsrf = await getCsrf(baseUrl);

  // Idle: a sample of owners, one after another, before the attack.
  const idle: OwnerRun[] = [];
  for (let i = 0; i < Math.min(size.idleSignIns, accounts.length); i++)
    idle.push(await ownerSignIn(baseUrl, ownerCsrf, accounts[i]!, ownerAddress(round, 2, i)));

  const mailsBefore = (await outbox.settled(500, 5_000), outbox.kinds());
  const errorsBefore = server.errorLines().length;
  const outagesBefore = server.eventCount("breach_check_unavailable");
  const cpuBeforeMs = server.cpuMs();
  context.say(`${tag}: ${pairs.length} pairs from ${pairs.length} addresses while ${accounts.length} owners sign in from known devices`);
  const answers: AttackAnswer[] = [];
  const ownerRuns: Promise<OwnerRun & { endedMs: number }>[] = [];
  const startedMs = performance.now();
  await pool(pairs.length, size.attackConcurrency, Date.now() + 10 * 60_000, async (n) => {
    // One owner per triesPerAccount attempts: every owner signs in while the attack runs.
    if (n % size.triesPerAccount === 0 && n / size.triesPerAccount < accounts.length) {
      const owner = n / size.triesPerAccount;
      ownerRuns.push(
        ownerSignIn(baseUrl, ownerCsrf, accounts[owner]!, ownerAddress(round, 3, owner)).then((run) => ({
          ...run,
          endedMs: performance.now(),
        })),
      );
    }
    const { account, position } = pairs[n]!;
    const target = accounts[account]!;
    const right = target.rightAt === position;
    const password = target.list[position]!;
    const channel: Channel = (account + position) % 2 === 0 ? "browser" : "api";
    const address = attackerAddress(round, n);
    // Each try solves a fresh challenge at the size the server asks now: solutions stockpiled
    // before the attack are refused as too easy once the server raises the size under pressure.
    // A 503 (the hash budget full) or a proof of work refused is no answer about the password:
    // the attacker tries the pair again, as one who wants every pair tried would.
    for (let tries = 1; ; tries++) {
      const altcha = await solvedPayload(baseUrl, address);
      const attempt = { address, email: target.email, password, altcha };
      let label: string;
      let taken: boolean;
      let busy: boolean;
      let retryAfterSeconds: number | undefined;
      if (channel === "browser") {
        const outcome = await signIn(baseUrl, { ...attempt, csrf: attackCsrf });
        taken = outcome.kind === "signed-in";
        busy = outcome.kind === "busy" || outcome.kind === "captcha_invalid";
        retryAfterSeconds = outcome.retryAfterSeconds;
        label = `browser ${outcome.status} ${outcome.reason ?? outcome.kind}`;
      } else {
        const outcome = await tokenSignIn(baseUrl, attempt);
        taken = outcome.kind === "signed-in";
        busy = outcome.status === 503 || outcome.error === "captcha_invalid";
        retryAfterSeconds = outcome.retryAfterSeconds;
        label = `API ${outcome.status} ${outcome.error ?? outcome.kind}`;
      }
      if (!busy || tries >= MAX_TRIES_PER_SIGN_IN) {
        answers.push({ account, position, right, channel, taken, label, tries });
        break;
      }
      await sleep((retryAfterSeconds || 0.2) * 1000);
    }
  });
  const attackEndedMs = performance.now();
  const attackCpuMs = server.cpuMs() - cpuBeforeMs;
  const owners = await Promise.all(ownerRuns);
  await outbox.settled(1_500, 15_000);
  const mails = minusKinds(outbox.kinds(), mailsBefore);

  const rightAnswers = answers.filter((answer) => answer.right);
  const takenAccounts = new Map<number, number>();
  for (const answer of answers) if (answer.taken) takenAccounts.set(answer.account, answer.position);
  const takenFirst = [...takenAccounts.values()].filter((position) => position === 0).length;
  return {
    setup: setupName(prepared.setup),
    round,
    takenFirst,
    takenLater: takenAccounts.size - takenFirst,
    rightAnswered: tally(rightAnswers.map((answer) => answer.label.replace(/^(browser|API) /, ""))),
    confirmationsForRight: rightAnswers.filter((answer) => answer.label.includes("device_confirmation_required")).length,
    idle,
    owners,
    mails,
    attackAnswers: tally(answers.map((answer) => answer.label)),
    retried: answers.filter((answer) => answer.tries > 1).length,
    attackSeconds: (attackEndedMs - startedMs) / 1000,
    attackCpuSeconds: attackCpuMs / 1000,
    serverErrors: server.errorLines().length - errorsBefore,
    breachOutages: server.eventCount("breach_check_unavailable") - outagesBefore,
    ownersAfterAttack: owners.filter((run) => run.endedMs > attackEndedMs).length,
  };
}

function setupRow(setup: string, results: readonly RoundResult[], size: Sizes): string[] {
  const of = results.filter((result) => result.setup === setup);
  const over = (pick: (result: RoundResult) => number, format: (value: number) => string) => range(of.map(pick), format);
  const p = (runs: readonly OwnerRun[], q: "p50" | "p99") => summarize(runs.map((run) => run.firstPostMs))[q];
  const latency = (runs: (result: RoundResult) => OwnerRun[]) =>
    `${over((result) => p(runs(result), "p50"), fmt.ms)} / ${over((result) => p(runs(result), "p99"), fmt.ms)}`;
  const firstTry = (result: RoundResult) =>
    (100 * result.owners.filter((run) => run.signedIn && run.tries === 1).length) / result.owners.length;
  const percent = (value: number) => `${fmt.fixed(value, 0)}%`;
  const mails = [...new Set(of.flatMap((result) => [...result.mails.keys()]))]
    .sort()
    .map((kind) => `${kind} ${over((result) => result.mails.get(kind) ?? 0, fmt.int)}`)
    .join(", ");
  const total = (result: RoundResult) => [...result.mails.values()].reduce((a, b) => a + b, 0);
  return [
    setup,
    `**${over((result) => result.takenFirst + result.takenLater, fmt.int)}** of ${size.rightPairs} (right pair tried first: ${over((result) => result.takenFirst, fmt.int)}; after failures: ${over((result) => result.takenLater, fmt.int)})`,
    over((result) => result.confirmationsForRight, fmt.int),
    `**${over(firstTry, percent)}** (signed in ${over((result) => result.owners.filter((run) => run.signedIn).length, fmt.int)} of ${size.accounts})`,
    latency((result) => result.idle),
    latency((result) => result.owners),
    `**${over((result) => p(result.owners, "p99") / p(result.idle, "p99"), fmt.ratio)}** (p50 ${over((result) => p(result.owners, "p50") / p(result.idle, "p50"), fmt.ratio)})`,
    `**${over(total, fmt.int)}**${mails ? ` (${mails})` : ""}`,
  ];
}

type RangeServer = Awaited<ReturnType<typeof startRangeServer>>;

/** Every round of every setup, the order rotating from round to round. */
async function rounds(
  context: PartContext,
  size: Sizes,
  servers: ReadonlyMap<Setup, BenchServer>,
  ranges: RangeServer,
): Promise<RoundResult[]> {
  const setups = [...servers.keys()];
  const results: RoundResult[] = [];
  for (let round = 0; round < size.rounds; round++) {
    // The servers prepare together (nothing is measured then); the attacks run one at a time, in
    // an order that rotates, so no setup always runs first (or last) on the shared machine.
    const prepared = await Promise.all(setups.map((setup) => prepareRound(context, servers.get(setup)!, setup, round, size)));
    // The breach becomes known: every password of the round's lists is in the corpus once the
    // ranges cached at registration and enrolment have expired.
    ranges.leak(prepared.filter((each) => each.setup.corpus).flatMap((each) => each.accounts.flatMap((account) => account.list)));
    if (prepared.some((each) => each.setup.corpus)) await sleep(RANGE_CACHE_SECONDS * 1000 + 1_000);
    for (const setup of setups.map((_, i) => setups[(i + round) % setups.length]!)) {
      const result = await attackRound(
        context,
        prepared.find((each) => each.setup === setup)!,
        size,
      );
      context.say(
        `${result.setup}, round ${round + 1}: taken over ${result.takenFirst + result.takenLater}, owners first try ${result.owners.filter((run) => run.signedIn && run.tries === 1).length}/${result.owners.length}, mails ${[...result.mails.values()].reduce((a, b) => a + b, 0)} (${[...result.mails].map(([kind, n]) => `${kind} ${n}`).join(", ")}), owners' p99 ${fmt.ms(summarize(result.owners.map((run) => run.firstPostMs)).p99)} ÷ idle ${fmt.ms(summarize(result.idle.map((run) => run.firstPostMs)).p99)}, right pairs answered ${result.rightAnswered}, breach look-ups failed open ${result.breachOutages}, attack ${fmt.fixed(result.attackSeconds, 1)} s`,
      );
      results.push(result);
    }
  }
  return results;
}

/**
 * A full run starts one server per setup and alternates between them. A smoke run starts one
 * (`at-risk` with the corpus, the default mode as production should run it) for one tiny round:
 * it proves the code path, the staging of the corpus included.
 */
async function measure(context: PartContext, size: Sizes): Promise<RoundResult[]> {
  const setups = context.smoke ? SETUPS.filter((setup) => setup.mode === "at-risk" && setup.corpus) : SETUPS;
  context.say(`starting ${setups.length} server(s): ${setups.map(setupName).join("; ")}`);
  const ranges = await startRangeServer([]);
  const servers = new Map<Setup, BenchServer>();
  try {
    // One after another: several starting at once on a busy 2-core machine outlast the start timeout.
    for (const setup of setups) {
      const corpus: Record<string, string> = setup.corpus
        ? { BREACHED_PASSWORDS_URL: `${ranges.base}/ok`, BREACHED_PASSWORDS_CACHE_SECONDS: String(RANGE_CACHE_SECONDS) }
        : {};
      servers.set(
        setup,
        await startServer(context.root, { ...DRILL_SETTINGS, NEW_DEVICE_CONFIRMATION: setup.mode, ...corpus }, context.say),
      );
    }
    return await rounds(context, size, servers, ranges);
  } finally {
    await Promise.all([...servers.values()].map((server) => server.stop()));
    await ranges.close();
  }
}

async function drill(context: PartContext): Promise<PartReport> {
  const size = sizes(context.smoke);
  const results = await measure(context, size);
  const setups = SETUPS.map(setupName).filter((name) => results.some((result) => result.setup === name));

  const attempts = size.accounts * size.triesPerAccount;
  const perPosition = Math.ceil(size.rightPairs / size.triesPerAccount);
  const answersOf = (setup: string) => results.filter((result) => result.setup === setup);
  const serverErrors = results.reduce((sum, result) => sum + result.serverErrors, 0);
  const lateOwners = results.reduce((sum, result) => sum + result.ownersAfterAttack, 0);
  const breachOutages = results.reduce((sum, result) => sum + result.breachOutages, 0);
  const markdown = [
    `What this part measures: **credential stuffing**, pairs leaked elsewhere replayed against ${fmt.int(size.accounts)} accounts, beside the owners of those accounts signing in, in ${setups.length} setups: the new-device confirmation off, at its default (\`at-risk\`) and \`always\`, each with a breach corpus, and \`at-risk\` without one, so that each piece shows what it buys. One server per setup (\`node server.mjs\`, production build, fresh PGlite database, default limits and lockout, \`NEW_DEVICE_CONFIRMATION\` set, \`ALTCHA_MAX_COUNTER=${DRILL_SETTINGS.ALTCHA_MAX_COUNTER}\`, mail to the outbox folder), all running; ${size.rounds} round(s), each setup once per round in an order that rotates, every round on ${fmt.int(size.accounts)} fresh accounts.`,
    "",
    `**The corpus.** A combo list is a breach corpus: by the time its pairs are replayed, its passwords are in the range service. The drill runs a range server of its own in Pwned Passwords' format (tests/helpers/range-server.ts: \`SUFFIX:COUNT\` lines, padding asked for and given) and sets \`BREACHED_PASSWORDS_URL\` to it on the corpus setups. It is staged as it happens: the accounts are registered (and their owners' devices enrolled) while the corpus does not hold their passwords yet; then the breach becomes known (the range server learns every password of the round's lists, the right ones and the wrong ones) and the drill waits out the servers' range cache (\`BREACHED_PASSWORDS_CACHE_SECONDS=${RANGE_CACHE_SECONDS}\` here; a day by default) before the idle sample. An owner whose password is in the list is then told at their next sign-in (a \`password_breached\` mail, before the attack) and asked to choose a new one: the browser's session opens on the new-password page, the token API answers 403 \`password_change_required\` with the new \`device_token\`; both count as the owner getting in.`,
    "",
    `The attacker's list holds ${size.triesPerAccount} passwords for each account (${fmt.int(attempts)} pairs), the right one for ${size.rightPairs} of them; the right pair's place in the list is spread evenly (${perPosition} tried first, ${perPosition} second, …). It goes through the list pass by pass (every account's first password, then every account's second, …), each pair once, from an address of its own (198.18/15 through the trusted-proxy header: ${fmt.int(attempts)} addresses), without a device cookie, alternately through the browser's sign-in (\`/api/auth/callback/credentials\`) and the token API (\`/api/v1/authentication/token\`), ${size.attackConcurrency} in flight, each try with a challenge fetched as its address and solved right then, at whatever size the server asks; a pair answered 503 (the hash budget full) or whose proof of work was refused (too easy once the server raised the size) is sent again with a new one, up to ${MAX_TRIES_PER_SIGN_IN} times, as an attacker who wants every pair tried would. (A first run with solutions stockpiled before the attack saw 95% of them refused as too easy once the attack raised the size: that measured ALTCHA, not the confirmation.) It does not guess the mailed code. **Taken over**: an answer with a session cookie or a token pair. Every owner registered, then signed in once through the token API from a new device (with \`always\`, finishing with the code read from the outbox): from then on the owner holds a known device (its device token). ${size.idleSignIns} owners then sign in one after another on the idle server (the **idle** figures); during the attack every owner signs in once (one started per ${size.triesPerAccount} attacker pairs), half through the browser with the device cookie, half through the token API with the \`device_token\`, each from a new address: challenge, solve, post, a 503 tried again after Retry-After (up to ${MAX_TRIES_PER_SIGN_IN} tries). **First try**: signed in by the first post. Latency: the first post's time to the server's answer. **Mails**: files the server wrote to its outbox during the attack, by kind.`,
    "",
    table(
      [
        "Setup (`NEW_DEVICE_CONFIRMATION`, corpus)",
        "Accounts taken over (goal 0)",
        `Right pairs answered \`device_confirmation_required\` (of ${size.rightPairs})`,
        "Owners on a known device: first try (goal 100%)",
        "Owners idle: p50 / p99",
        "Owners during the attack: p50 / p99",
        "Owners' p99 ÷ idle",
        "Mails sent during the attack (by kind)",
      ],
      setups.map((setup) => setupRow(setup, results, size)),
    ),
    "",
    ...setups.map(
      (setup) =>
        `- ${setup}: the right pairs were answered ${answersOf(setup)
          .map((result) => result.rightAnswered)
          .join(" | ")}; every attacker answer: ${answersOf(setup)
          .map((result) => result.attackAnswers)
          .join(" | ")}; pairs sent again after a 503 or a refused proof of work: ${range(
          answersOf(setup).map((result) => result.retried),
          fmt.int,
        )}; the attack took ${range(
          answersOf(setup).map((result) => result.attackSeconds),
          (value) => `${fmt.fixed(value, 1)} s`,
        )}, the server's CPU meanwhile ${range(
          answersOf(setup).map((result) => result.attackCpuSeconds),
          (value) => `${fmt.fixed(value, 1)} s`,
        )}. Owners' answers when not signed in on the first try: ${
          tally(
            answersOf(setup)
              .flatMap((result) => result.owners)
              .filter((run) => !(run.signedIn && run.tries === 1))
              .map((run) => `${run.label} after ${run.tries} tries`),
          ) || "none"
        }.`,
    ),
    `- Owner sign-ins that ended after the attack's last answer (not wholly under attack): ${fmt.int(lateOwners)}. Server error lines during the attacks: ${fmt.int(serverErrors)}. Breach look-ups that failed open during the attacks (\`breach_check_unavailable\`, logged at most once per 10 s): ${fmt.int(breachOutages)}.`,
    "",
    "Without a corpus, `at-risk` asks for a code only once a username has failed a password check from an untrusted client in the last 24 hours: a right pair that is the first password tried for its account meets an account not yet at risk. With the corpus, every pair of the list is breached, so each waits for a code on its first try, right or wrong (the code is mailed only for a right one), and the answer is the same for both. Without the confirmation (`off`) the corpus only marks the account: the right pair still signs in, told to choose a new password. The owner's known device goes past the confirmation in every setup.",
  ].join("\n");
  const headline = setups
    .map((setup) => {
      const of = answersOf(setup);
      return `${setup}: ${range(
        of.map((result) => result.takenFirst + result.takenLater),
        fmt.int,
      )}/${size.rightPairs} taken over, owners first try ${range(
        of.map((result) => (100 * result.owners.filter((run) => run.signedIn && run.tries === 1).length) / result.owners.length),
        (value) => `${fmt.fixed(value, 0)}%`,
      )}, mails ${range(
        of.map((result) => [...result.mails.values()].reduce((a, b) => a + b, 0)),
        fmt.int,
      )}`;
    })
    .join("; ");
  return {
    markdown,
    headlines: [
      `Credential stuffing, ${fmt.int(attempts)} pairs on ${fmt.int(size.accounts)} accounts (${size.rightPairs} right): ${headline}`,
    ],
  };
}

export const stuffingPart: Part = {
  id: "stuffing",
  title: PART_TITLES.stuffing,
  run: (context) => drill(context),
};

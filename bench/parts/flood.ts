import { spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { parseLimitSpec } from "@/lib/rate-limit/policies";
import { defaultSpec } from "../lib/limits";
import { answered, answeredWith, FloodClient, type CannonLoad, type Flood } from "../lib/cannon";
import { getCsrf, register, request, SIGN_IN_PATH, signIn, signInBody, signInHeaders, solvedPayload, type Csrf } from "../lib/http";
import { legitSignIn, legitUser, tally, type LegitSignIn } from "../lib/legit";
import { PART_TITLES, type Part, type PartContext, type PartReport } from "../lib/part";
import { DRILL_SETTINGS, freePort, killOnExit, processTreeCpuMs, startServer, type BenchServer } from "../lib/server";
import { fmt, median, sleep, summarize, table } from "../lib/stats";

/**
 * Part 2: what a flood costs the server, and what it costs everybody else.
 *
 * One address floods the sign-in endpoint with wrong passwords; once its allowance is spent every
 * answer is a refusal, and the server's CPU per refusal is measured beside a static file served
 * by the same server, a bare Node server answering the same 429 (the floor) and, with
 * `--compare DIR`, the same flood against another checkout's build (the commit before the refusal
 * fast path). Then a legitimate user signs in (page, challenge, solve, post) on the idle server,
 * during that one-address flood at full load, and during a flood from 1,000 addresses, each of
 * which is refused only after its own allowance. The attacker is given its best case: a new
 * username on every request (only the per-address limit applies).
 *
 * Load: autocannon in a process of its own (bench/lib/cannon-child.ts), so the legitimate user's
 * timings are not the load generator's. Server CPU is read from /proc (user + system of the
 * server's process tree) as each flood starts and ends. Phases of the two builds and the floor
 * alternate, round after round, so drift on a shared machine hits them alike; per-request figures
 * are the median of the rounds.
 */

const ATTACKER_ADDRESS = "203.0.113.7";
/** Connections of every flood: enough to keep the server's event loop busy (its CPU share is reported). */
const CONNECTIONS = 32;
const REQUEST_CAP = 2_000_000;
const LEGIT_EMAIL = "legit.user@example.com";
const LEGIT_PASSWORD = "correct horse battery staple";
const MAX_TRIES = 3;
/** The issue's targets. */
const TARGET_REFUSAL_RATIO = 0.3;
const TARGET_P99_RATIO = 2;

type Sizes = {
  openingSeconds: number;
  poolSize: number;
  warmupSeconds: number;
  rounds: number;
  /** Whole seconds: autocannon checks its end once a second. */
  phaseSeconds: number;
  /** Sign-ins of the legitimate user on each server before any is measured (the first ones run cold code). */
  legitWarmup: number;
  legitRuns: number;
  legitPaceMs: number;
  /** Upper bound of a flood that runs under a legitimate user (it is stopped when the user is done, within a second). */
  legitFloodSeconds: number;
  spreadAddresses: number;
};

const FULL: Sizes = {
  openingSeconds: 5,
  poolSize: 40,
  warmupSeconds: 1,
  rounds: 5,
  phaseSeconds: 2,
  legitWarmup: 3,
  legitRuns: 120,
  legitPaceMs: 120,
  legitFloodSeconds: 30,
  spreadAddresses: 1_000,
};
const SMOKE: Sizes = {
  openingSeconds: 1,
  poolSize: 4,
  warmupSeconds: 0,
  rounds: 1,
  phaseSeconds: 1,
  legitWarmup: 0,
  legitRuns: 2,
  legitPaceMs: 50,
  legitFloodSeconds: 10,
  spreadAddresses: 20,
};

/** A production server under test: this checkout's build, or the `--compare` one. */
type Target = { name: string; commit: string; server: BenchServer; csrf: Csrf; fastPath: boolean };

/** One measured flood of a cost row. */
type Sample = {
  answered: number;
  seconds: number;
  cpuMs: number;
  p50: number;
  p99: number;
  statuses: Record<string, number>;
  errors: number;
  timeouts: number;
};

type Row = { samples: Sample[] };

const perRequestMs = (sample: Sample) => sample.cpuMs / Math.max(1, sample.answered);
const rowPerRequestMs = (row: Row) => median(row.samples.map(perRequestMs));
const rowRate = (row: Row) => median(row.samples.map((sample) => sample.answered / sample.seconds));
/** Share of one core the server's process tree used while the flood ran. */
const rowBusy = (row: Row) => median(row.samples.map((sample) => sample.cpuMs / (sample.seconds * 1000)));
const rowTotal = (row: Row) => row.samples.reduce((sum, sample) => sum + sample.answered, 0);
const rowRange = (row: Row) => {
  const values = row.samples.map(perRequestMs);
  return values.length < 2 ? "" : ` (${fmt.usFromMs(Math.min(...values))} to ${fmt.usFromMs(Math.max(...values))})`;
};
const describe = (statuses: Record<string, number>) =>
  Object.entries(statuses)
    .sort((a, b) => Number(a[0]) - Number(b[0]))
    .map(([code, n]) => `${code}: ${fmt.int(n)}`)
    .join(", ");
const merged = (samples: readonly { statuses: Record<string, number> }[]) => {
  const all: Record<string, number> = {};
  for (const sample of samples) for (const [code, n] of Object.entries(sample.statuses)) all[code] = (all[code] ?? 0) + n;
  return all;
};
const sampleOf = (flood: Flood): Sample => ({
  answered: answered(flood),
  seconds: flood.durationSeconds,
  cpuMs: flood.cpuMs,
  p50: flood.latencyP50,
  p99: flood.latencyP99,
  statuses: flood.statuses,
  errors: flood.errors,
  timeouts: flood.timeouts,
});

/** The 1,000 flooding addresses: 172.16.x.y. */
const spreadAddress = (n: number) => `172.16.${Math.floor(n / 250)}.${(n % 250) + 1}`;
/** The legitimate user's n-th sign-in comes from a new address (100.64.x.y), clear of its own per-username limit. */
const legitAddress = (n: number) => `100.64.${Math.floor(n / 250) % 250}.${(n % 250) + 1}`;

/** Waits until Argon2id work already admitted has finished: no new verification for `quietMs`. */
async function settle(server: BenchServer, quietMs: number, limitMs: number): Promise<void> {
  const untilMs = Date.now() + limitMs;
  let last = -1;
  while (Date.now() < untilMs) {
    const now = server.eventCount("sign_in_failed") + server.eventCount("sign_in_succeeded");
    if (now === last) return;
    last = now;
    await sleep(quietMs);
  }
}

/** The bare Node server of the floor, in its own process, answering `reply` to everything. */
export async function startFloor(
  root: string,
  reply: { status: number; headers: Record<string, string>; body: string },
): Promise<{ pid: number; baseUrl: string; cpuMs(): number; stop(): void }> {
  const port = await freePort();
  const script = path.join(root, "bench", "lib", "floor-server.ts");
  const child = spawn(process.execPath, ["--import", "tsx", script, JSON.stringify({ port, ...reply })], {
    cwd: root,
    stdio: ["ignore", "pipe", "inherit"],
  });
  killOnExit(child);
  const listening = await Promise.race([
    new Promise<boolean>((resolve) =>
      readline.createInterface({ input: child.stdout! }).on("line", (line) => line === "listening" && resolve(true)),
    ),
    new Promise<boolean>((resolve) => child.once("exit", () => resolve(false))),
    sleep(30_000).then(() => false),
  ]);
  if (!listening) {
    child.kill("SIGKILL");
    throw new Error("the floor server did not start");
  }
  return {
    pid: child.pid!,
    baseUrl: `http://127.0.0.1:${port}`,
    cpuMs: () => processTreeCpuMs(child.pid!),
    stop: () => child.kill("SIGTERM"),
  };
}

type LegitRun = { pageMs: number; pageStatus: number; signIn: LegitSignIn };

/**
 * The legitimate user: up to `count` times, one every `paceMs` (or when the previous one ends),
 * loads the sign-in page, then signs in as the page does (challenge, solve, post), from a new
 * address each time, until `stop()` says so.
 */
async function legitRuns(target: Target, startAt: number, count: number, paceMs: number, stop: () => boolean): Promise<LegitRun[]> {
  const user = legitUser("legit", LEGIT_EMAIL, LEGIT_PASSWORD, false, legitAddress);
  user.started = startAt;
  const runs: LegitRun[] = [];
  const firstMs = performance.now();
  for (let n = 0; n < count && !stop(); n++) {
    await sleep(firstMs + n * paceMs - performance.now());
    if (stop()) break;
    const page = await request(target.server.baseUrl, {
      method: "GET",
      path: "/sign-in",
      headers: { "x-forwarded-for": legitAddress(startAt + n) },
    });
    const run = await legitSignIn(target.server.baseUrl, target.csrf, user, MAX_TRIES);
    runs.push({ pageMs: page.ms, pageStatus: page.status, signIn: run });
  }
  return runs;
}

type LegitPhase = { target: Target; condition: string; runs: LegitRun[]; flood?: Flood };

function legitFigures(phase: LegitPhase) {
  const page = summarize(phase.runs.map((run) => run.pageMs));
  const post = summarize(phase.runs.map((run) => run.signIn.firstPostMs));
  const whole = summarize(phase.runs.filter((run) => run.signIn.signedIn).map((run) => run.signIn.totalMs));
  return { page, post, whole, signedIn: phase.runs.filter((run) => run.signIn.signedIn).length };
}

export const floodPart: Part = {
  id: "flood",
  title: PART_TITLES.flood,
  run(context: PartContext): Promise<PartReport> {
    const sizes = context.smoke ? SMOKE : FULL;
    // The comparison server starts while this one does.
    const comparing = context.compare ? startServer(context.compare.root, { ...DRILL_SETTINGS }, context.say) : undefined;
    comparing?.catch(() => {});
    return context.withServer(async (server) => {
      const before = await comparing;
      const flooder = new FloodClient(context.root);
      try {
        return await drill(context, sizes, flooder, server, before);
      } finally {
        flooder.close();
        await before?.stop();
      }
    });
  },
};

async function drill(
  context: PartContext,
  sizes: Sizes,
  flooder: FloodClient,
  server: BenchServer,
  beforeServer: BenchServer | undefined,
): Promise<PartReport> {
  const say = context.say;
  const [addressBandwidth] = parseLimitSpec(defaultSpec("signInAddress"));
  const targets: Target[] = [{ name: "This build", commit: "", server, csrf: await getCsrf(server.baseUrl), fastPath: true }];
  if (beforeServer && context.compare)
    targets.push({
      name: `Commit ${context.compare.commit}`,
      commit: context.compare.commit,
      server: beforeServer,
      csrf: await getCsrf(beforeServer.baseUrl),
      fastPath: false,
    });
  const after = targets[0]!;

  // The attacker's opening burst on each server: the allowance is spent and admitted attempts
  // queue for Argon2id; from then on every answer to 203.0.113.7 is a refusal.
  const openings = new Map<Target, { flood: Flood; reachedArgon2: number; allowance: number; elapsedMs: number }>();
  const sprayLoads = new Map<Target, CannonLoad>();
  for (const target of targets) {
    await register(target.server.baseUrl, "100.127.0.10", LEGIT_EMAIL, LEGIT_PASSWORD).then((reply) => {
      if (![201, 202].includes(reply.status)) throw new Error(`registering the legitimate user answered ${reply.status}: ${reply.text}`);
    });
    // Solutions fetched from other addresses: challenges are not bound to who asked for them.
    const pool: string[] = [];
    for (let i = 0; i < sizes.poolSize; i++) pool.push(await solvedPayload(target.server.baseUrl, `198.51.100.${i + 1}`));
    const load: CannonLoad = {
      kind: "spray",
      path: SIGN_IN_PATH,
      headers: signInHeaders(ATTACKER_ADDRESS, target.csrf),
      csrfToken: target.csrf.token,
      pool,
      addresses: [ATTACKER_ADDRESS],
    };
    sprayLoads.set(target, load);
    const argon2Before = target.server.eventCount("sign_in_failed");
    const startedMs = Date.now();
    say(`${target.name}: opening burst from ${ATTACKER_ADDRESS}, ${CONNECTIONS} connections`);
    const flood = await flooder.run(
      {
        url: target.server.baseUrl,
        connections: CONNECTIONS,
        durationSeconds: sizes.openingSeconds,
        maxRequests: REQUEST_CAP,
        load,
        stopAt: { status: 429, count: 200 },
      },
      () => target.server.cpuMs(),
    );
    await settle(target.server, context.smoke ? 300 : 1_000, 30_000);
    const elapsedMs = Date.now() - startedMs;
    const allowance = addressBandwidth!.capacity + Math.ceil((elapsedMs * addressBandwidth!.capacity) / addressBandwidth!.periodMs);
    openings.set(target, { flood, reachedArgon2: target.server.eventCount("sign_in_failed") - argon2Before, allowance, elapsedMs });
  }

  // The floor answers what the fast path answers, header for header.
  const sample = await request(server.baseUrl, {
    method: "POST",
    path: SIGN_IN_PATH,
    headers: signInHeaders(ATTACKER_ADDRESS, after.csrf),
    body: signInBody({ email: "x@example.com", password: "wrong-password-123", altcha: "x", csrfToken: after.csrf.token }),
  });
  if (sample.status !== 429) throw new Error(`the attacker's address was not refused after the opening burst (${sample.status})`);
  const floorHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(sample.headers)) {
    if (typeof value === "string" && !["date", "connection", "keep-alive", "transfer-encoding", "content-length"].includes(name))
      floorHeaders[name] = value;
  }
  const floor = await startFloor(context.root, { status: sample.status, headers: floorHeaders, body: sample.text });

  type CostRow = Row & { label: string; target?: Target; kind: "refused" | "static" | "floor" | "health" | "page" };
  const rows: CostRow[] = [];
  const costRow = (label: string, kind: CostRow["kind"], target?: Target): CostRow => {
    const row: CostRow = { label, kind, target, samples: [] };
    rows.push(row);
    return row;
  };
  const fixed = (method: "GET", routePath: string): CannonLoad => ({ kind: "fixed", method, path: routePath });
  type Step = { row: CostRow; url: string; load: CannonLoad; cpu: () => number };
  const steps: Step[] = [];
  for (const target of targets) {
    const cpu = () => target.server.cpuMs();
    const url = target.server.baseUrl;
    steps.push({
      row: costRow(`Refused sign-in, ${target.fastPath ? "fast path" : "through Next.js"} (POST ${SIGN_IN_PATH})`, "refused", target),
      url,
      load: sprayLoads.get(target)!,
      cpu,
    });
    steps.push({
      row: costRow("Static file through Next.js (GET /robots.txt)", "static", target),
      url,
      load: fixed("GET", "/robots.txt"),
      cpu,
    });
  }
  steps.push({
    row: costRow("Floor: a bare Node http server answering the same requests with the same 429 (its own process)", "floor"),
    url: floor.baseUrl,
    load: sprayLoads.get(after)!,
    cpu: floor.cpuMs,
  });
  for (const target of targets) {
    const cpu = () => target.server.cpuMs();
    steps.push({
      row: costRow("API route (GET /api/health: one `SELECT 1`)", "health", target),
      url: target.server.baseUrl,
      load: fixed("GET", "/api/health"),
      cpu,
    });
    steps.push({
      row: costRow("Page (GET /sign-in; proxy.ts runs in both builds: the control)", "page", target),
      url: target.server.baseUrl,
      load: fixed("GET", "/sign-in"),
      cpu,
    });
  }
  // Like steps of both builds run next to each other; the order flips every round.
  const ordered = (round: number) => {
    const kinds: CostRow["kind"][] = ["refused", "floor", "static", "health", "page"];
    return kinds.flatMap((kind) => {
      const ofKind = steps.filter((step) => step.row.kind === kind);
      return round % 2 === 0 ? ofKind : [...ofKind].reverse();
    });
  };

  try {
    if (sizes.warmupSeconds > 0) {
      say(`warm-up: ${steps.length} routes, ${sizes.warmupSeconds} s each (not measured)`);
      for (const step of ordered(0))
        await flooder.run(
          { url: step.url, connections: CONNECTIONS, durationSeconds: sizes.warmupSeconds, maxRequests: REQUEST_CAP, load: step.load },
          step.cpu,
        );
    }
    for (let round = 0; round < sizes.rounds; round++) {
      say(`cost round ${round + 1}/${sizes.rounds}: ${steps.length} floods of ${sizes.phaseSeconds} s`);
      for (const step of ordered(round)) {
        const flood = await flooder.run(
          { url: step.url, connections: CONNECTIONS, durationSeconds: sizes.phaseSeconds, maxRequests: REQUEST_CAP, load: step.load },
          step.cpu,
        );
        step.row.samples.push(sampleOf(flood));
      }
    }
  } finally {
    floor.stop();
  }

  // The legitimate user: idle, during the one-address flood, during the 1,000-address flood. The
  // spread flood replays one solution per server, spent here first.
  const spent = new Map<Target, string>();
  for (const target of targets) {
    const payload = await solvedPayload(target.server.baseUrl, "100.127.0.2");
    await signIn(target.server.baseUrl, {
      address: "100.127.0.2",
      csrf: target.csrf,
      email: "spent@example.com",
      password: "wrong-password-123",
      altcha: payload,
    });
    spent.set(target, payload);
    await settle(target.server, context.smoke ? 300 : 1_000, 10_000);
  }
  const legitPhases: LegitPhase[] = [];
  let legitStarted = 0;
  const underFlood = async (target: Target, condition: string, load: CannonLoad | undefined): Promise<void> => {
    const start = legitStarted;
    legitStarted += sizes.legitRuns;
    if (!load) {
      say(`${target.name}: legitimate user on the idle server, ${sizes.legitRuns} sign-ins`);
      legitPhases.push({ target, condition, runs: await legitRuns(target, start, sizes.legitRuns, sizes.legitPaceMs, () => false) });
      return;
    }
    say(`${target.name}: legitimate user during the ${condition}, ${sizes.legitRuns} sign-ins`);
    let floodEnded = false;
    let legit: Promise<LegitRun[]> | undefined;
    const flood = flooder
      .run(
        { url: target.server.baseUrl, connections: CONNECTIONS, durationSeconds: sizes.legitFloodSeconds, maxRequests: REQUEST_CAP, load },
        () => target.server.cpuMs(),
        () => {
          // Half a second for the flood to reach full load, then the user starts.
          legit = sleep(context.smoke ? 100 : 500).then(() =>
            legitRuns(target, start, sizes.legitRuns, sizes.legitPaceMs, () => floodEnded),
          );
        },
      )
      .finally(() => (floodEnded = true));
    // The flood ends when the user is done (or at its bound).
    while (!legit && !floodEnded) await sleep(20);
    const runs = legit ? await legit : [];
    flooder.stop();
    legitPhases.push({ target, condition, runs, flood: await flood });
  };
  const spreadLoad = (target: Target): CannonLoad => ({
    kind: "spray",
    path: SIGN_IN_PATH,
    headers: signInHeaders(ATTACKER_ADDRESS, target.csrf),
    csrfToken: target.csrf.token,
    // Replays of a solution already spent: refused by ALTCHA, after the per-address limit.
    pool: [spent.get(target)!],
    addresses: Array.from({ length: sizes.spreadAddresses }, (_, n) => spreadAddress(n)),
  });
  for (const target of targets) {
    await legitRuns(target, legitStarted, sizes.legitWarmup, 0, () => false);
    legitStarted += sizes.legitWarmup;
  }
  for (const target of targets) await underFlood(target, "idle server", undefined);
  for (const target of targets) await underFlood(target, "one-address flood", sprayLoads.get(target));
  for (const target of targets) await underFlood(target, `${fmt.int(sizes.spreadAddresses)}-address flood`, spreadLoad(target));

  return report(context, sizes, { targets, openings, rows, legitPhases, addressCapacity: addressBandwidth!.capacity });
}

type Measured = {
  targets: Target[];
  openings: Map<Target, { flood: Flood; reachedArgon2: number; allowance: number; elapsedMs: number }>;
  rows: (Row & { label: string; target?: Target; kind: "refused" | "static" | "floor" | "health" | "page" })[];
  legitPhases: LegitPhase[];
  addressCapacity: number;
};

function report(context: PartContext, sizes: Sizes, measured: Measured): PartReport {
  const { targets, openings, rows, legitPhases } = measured;
  const [after, before] = targets as [Target, Target | undefined];
  const row = (kind: Measured["rows"][number]["kind"], target?: Target) =>
    rows.find((each) => each.kind === kind && each.target === target)!;
  const cost = (kind: Measured["rows"][number]["kind"], target?: Target) => rowPerRequestMs(row(kind, target));
  const staticAfter = cost("static", after);
  const refusedRatio = cost("refused", after) / staticAfter;
  const floorRatio = cost("floor") / staticAfter;
  const beforeRatio = before ? cost("refused", before) / cost("static", before) : Number.NaN;
  const beforeCol = before ? `commit ${before.commit}` : "";
  const cores = os.availableParallelism();

  const costTable = table(
    [
      "Build",
      "What the flood asks",
      "Answers",
      "Answers/s",
      "Server busy (share of one core)",
      "Server CPU per request (median of rounds; range)",
      "÷ static file (same build)",
      "Latency p50 / p99 (last round)",
    ],
    rows
      .filter((each) => each.kind !== "health" && each.kind !== "page")
      .map((each) => {
        const last = each.samples.at(-1);
        const staticOfBuild = each.target ? cost("static", each.target) : staticAfter;
        return [
          each.target ? (each.target === after ? "this build" : beforeCol) : "—",
          `${each.label}; ${describe(merged(each.samples))}`,
          fmt.int(rowTotal(each)),
          fmt.int(rowRate(each)),
          `${fmt.int(rowBusy(each) * 100)}%`,
          `**${fmt.usFromMs(rowPerRequestMs(each))}**${rowRange(each)}`,
          each.kind === "static"
            ? "1×"
            : `**${fmt.ratio(rowPerRequestMs(each) / staticOfBuild)}**${each.kind === "floor" ? " (of this build's)" : ""}`,
          last ? `${last.p50} ms / ${last.p99} ms` : "n/a",
        ];
      }),
  );

  const proxyRows = (["health", "page"] as const).map((kind) => {
    const now = cost(kind, after);
    const then = before ? cost(kind, before) : Number.NaN;
    return [
      row(kind, after).label,
      `${fmt.usFromMs(now)}${rowRange(row(kind, after))}, ${fmt.int(rowRate(row(kind, after)))}/s`,
      before ? `${fmt.usFromMs(then)}${rowRange(row(kind, before))}, ${fmt.int(rowRate(row(kind, before)))}/s` : "not measured",
      before
        ? `${then < now ? "−" : ""}${fmt.usFromMs(Math.abs(then - now))} (${then < now ? "−" : ""}${fmt.fixed((100 * Math.abs(then - now)) / then, 0)}%)`
        : "n/a",
    ];
  });

  const idleOf = (target: Target) => legitPhases.find((phase) => phase.target === target && !phase.flood);
  const legitRows = legitPhases.map((phase) => {
    const figures = legitFigures(phase);
    const idle = idleOf(phase.target);
    const idleFigures = idle ? legitFigures(idle) : undefined;
    const ratio = (value: number, idleValue: number | undefined) => (phase.flood && idleValue ? ` (${fmt.ratio(value / idleValue)})` : "");
    const flood = phase.flood;
    return [
      phase.target === after ? "this build" : beforeCol,
      phase.condition,
      flood
        ? `${fmt.int(answered(flood) / flood.durationSeconds)}/s (${describe(flood.statuses)}); server busy ${fmt.int((flood.cpuMs / (flood.durationSeconds * 1000)) * 100)}%`
        : "—",
      `${fmt.int(figures.signedIn)}/${fmt.int(phase.runs.length)}`,
      `${fmt.ms(figures.page.p50)} / ${fmt.ms(figures.page.p99)}${ratio(figures.page.p99, idleFigures?.page.p99)}`,
      `${fmt.ms(figures.post.p50)} / ${fmt.ms(figures.post.p99)}${ratio(figures.post.p99, idleFigures?.post.p99)}`,
      `${fmt.ms(figures.whole.p50)} / ${fmt.ms(figures.whole.p99)}${ratio(figures.whole.p99, idleFigures?.whole.p99)}`,
      tally(phase.runs.map((run) => run.signIn.outcome)),
    ];
  });

  // Target checks: the legitimate user's p99 under the one-address flood against its idle p99.
  const p99Check = (target: Target, condition: string) => {
    const phase = legitPhases.find((each) => each.target === target && each.condition === condition);
    const idle = idleOf(target);
    if (!phase || !idle) return undefined;
    const figures = legitFigures(phase);
    const idleFigures = legitFigures(idle);
    return {
      page: figures.page.p99 / idleFigures.page.p99,
      post: figures.post.p99 / idleFigures.post.p99,
      whole: figures.whole.p99 / idleFigures.whole.p99,
    };
  };
  const oneAddress = p99Check(after, "one-address flood");
  const spreadCondition = `${fmt.int(sizes.spreadAddresses)}-address flood`;
  const spread = p99Check(after, spreadCondition);
  const oneAddressBefore = before ? p99Check(before, "one-address flood") : undefined;
  const met = (ratio: number | undefined, target: number) =>
    ratio !== undefined && Number.isFinite(ratio) ? (ratio <= target ? "met" : "not met") : "n/a";
  const worst = (check: { page: number; post: number; whole: number } | undefined) =>
    check ? Math.max(check.page, check.post, check.whole) : Number.NaN;

  // The 1,000-address flood: how much of it the fast path answered.
  const spreadPhase = legitPhases.find((phase) => phase.target === after && phase.condition === spreadCondition);
  const spreadFlood = spreadPhase?.flood;
  const spreadAnswered = spreadFlood ? answered(spreadFlood) : 0;
  const spread429 = spreadFlood ? answeredWith(spreadFlood, 429) : 0;
  const spreadRate = spreadFlood ? spreadAnswered / spreadFlood.durationSeconds : Number.NaN;
  const spreadCpuPerRequest = spreadFlood ? spreadFlood.cpuMs / Math.max(1, spreadAnswered) : Number.NaN;
  const untilAllRefused = sizes.spreadAddresses * (measured.addressCapacity + 1);
  const allFloods: { errors: number; timeouts: number }[] = [
    ...[...openings.values()].map((opening) => opening.flood),
    ...rows.flatMap((each) => each.samples),
    ...legitPhases.flatMap((phase) => (phase.flood ? [phase.flood] : [])),
  ];
  const oneAddressFlood = legitPhases.find((phase) => phase.target === after && phase.condition === "one-address flood")?.flood;

  const openingRows = targets.map((target) => {
    const opening = openings.get(target)!;
    return [
      target === after ? "this build" : beforeCol,
      `${fmt.int(answered(opening.flood))} (${describe(opening.flood.statuses)}) in ${fmt.fixed(opening.flood.durationSeconds, 1)} s`,
      `**${fmt.int(opening.reachedArgon2)}**`,
      `${fmt.int(opening.allowance)} (capacity + refill over ${fmt.fixed(opening.elapsedMs / 1000, 1)} s): ${opening.reachedArgon2 <= opening.allowance ? "within" : "**EXCEEDED**"}`,
    ];
  });

  const compareSetup = context.compare
    ? `The ${beforeCol} column is a second checkout with its own production build, started beside this one and measured in the same run (made with \`git clone -q . ${context.compare.root} && git -C ${context.compare.root} checkout -q ${before?.commit ?? "<commit>"} && (cd ${context.compare.root} && npm ci && npm run build)\`).`
    : "No `--compare` checkout was given, so there is no before column: run with `--compare DIR`, DIR a checkout of the commit before the fast path (2beb7a3) with its own build.";

  const markdown = [
    `Servers: \`node server.mjs\` (production build, fresh PGlite database, default limits: sign-in ${defaultSpec("signInAddress")} per address and ${defaultSpec("signInUsername")} per username + address, lockout after 5, hash budget = CPU count running + 8 waiting, Argon2id m=19456 KiB t=2 p=1; \`ALTCHA_MAX_COUNTER=1000\` and \`ALTCHA_EXPIRES_SECONDS=3600\` so the bench can make solutions cheaply). ${compareSetup} Load: autocannon in a process of its own, ${CONNECTIONS} connections, no \`Accept-Encoding\` (so no gzip), on the same ${cores}-core machine as the servers; every attacker request comes through the trusted-proxy header and names a new username (only the per-address limit applies). Server CPU is user + system of the server's process tree from /proc, read as each flood starts and ends; "server busy" is that CPU over the flood's wall time (100% = one core; Node answers HTTP on one thread, so about 100% is the server's capacity).`,
    "",
    "**The opening burst** (until 200 refusals): the attacker's allowance is spent, and only the policy's allowance reaches Argon2id.",
    "",
    table(
      ["Build", "Requests answered", "Reached Argon2id (`sign_in_failed`)", `Policy allows (${defaultSpec("signInAddress")} per address)`],
      openingRows,
    ),
    "",
    `**What a refusal costs.** From here on every answer to ${ATTACKER_ADDRESS} is a refusal. Each row below is a flood of ${sizes.phaseSeconds} s, ${sizes.rounds} round(s), the rows of both builds and the floor alternating (order flipped every round) after a ${sizes.warmupSeconds} s warm-up of each; per-request CPU is the median of the rounds. The floor is a bare \`http.createServer\` in its own process sending the fast path's 429 header for header.`,
    "",
    costTable,
    "",
    `- A repeated refusal costs **${fmt.ratio(refusedRatio)}** the server CPU of a static file (target ≤ ${TARGET_REFUSAL_RATIO}×: **${refusedRatio <= TARGET_REFUSAL_RATIO ? "met" : "not met"}**)${before ? `; before the fast path (${beforeCol}, same run) **${fmt.ratio(beforeRatio)}**, so a refusal now costs ${fmt.ratio(cost("refused", before) / cost("refused", after))} less CPU` : ""}. The floor is ${fmt.ratio(floorRatio)}: the fast path costs ${fmt.usFromMs(cost("refused", after) - cost("floor"))} per refusal above a bare Node server.`,
    `- The load generator is not what bounds the rates: the same autocannon process drove the floor at ${fmt.int(rowRate(row("floor")))}/s. It does share the ${cores} cores with the server, which is why "server busy" can stay under 100% when the machine is busy with the flood's client side as well.`,
    "",
    `**What narrowing proxy.ts saved.** proxy.ts (the CSP-nonce middleware) no longer runs for /api/; both builds still run it for pages, so the page row shows what the two builds differ by otherwise (and the noise). Server CPU per request, same floods, same rounds:`,
    "",
    table(["Route", "This build", before ? beforeCol : "Before", "Saved per request"], proxyRows),
    "",
    `**A legitimate user** loads the sign-in page (GET /sign-in), then signs in as the page does (challenge, solve, post; the right password, a new device, a new address each time so that its own per-username limit stays out of the way), up to ${sizes.legitRuns} times, one every ${sizes.legitPaceMs} ms or when the previous one ends (after ${sizes.legitWarmup} unmeasured ones per server): on the idle server; while ${ATTACKER_ADDRESS} (refused) floods at ${CONNECTIONS} connections; while ${fmt.int(sizes.spreadAddresses)} addresses (172.16.x.y, round robin) flood with a spent ALTCHA solution, each refused by ALTCHA (400) until its own allowance is spent. The flood starts half a second before the user's first sign-in and is stopped after the last, or after ${sizes.legitFloodSeconds} s (then the user has done fewer: see "Signed in"). Percentiles are nearest-rank: of ${sizes.legitRuns} sign-ins the p99 is the ${sizes.legitRuns >= 100 ? "second slowest" : "slowest"}, of fewer than 100 the slowest. In brackets: p99 ÷ the same build's idle p99.`,
    "",
    table(
      [
        "Build",
        "Condition",
        "Flood (answers/s; server busy)",
        "Signed in",
        "Page load p50 / p99",
        "Sign-in POST p50 / p99",
        "Whole sign-in p50 / p99 (challenge + solve + post)",
        "Answers",
      ],
      legitRows,
    ),
    "",
    `- One-address flood, this build: p99 ÷ idle: page ${fmt.ratio(oneAddress?.page ?? Number.NaN)}, sign-in POST ${fmt.ratio(oneAddress?.post ?? Number.NaN)}, whole sign-in ${fmt.ratio(oneAddress?.whole ?? Number.NaN)} (target ≤ ${TARGET_P99_RATIO}×: **${met(worst(oneAddress), TARGET_P99_RATIO)}**)${oneAddressBefore ? `; ${beforeCol}: page ${fmt.ratio(oneAddressBefore.page)}, POST ${fmt.ratio(oneAddressBefore.post)}, whole ${fmt.ratio(oneAddressBefore.whole)}` : ""}.`,
    `- Why a saturating flood still slows the user: Node answers on one thread, and at full load each turn of its event loop first serves the refusals already waiting, about ${CONNECTIONS} (one per connection) × ${fmt.usFromMs(cost("refused", after))} ≈ ${fmt.ms(CONNECTIONS * cost("refused", after))} here${before ? ` (${fmt.ms(CONNECTIONS * cost("refused", before))} before the fast path)` : ""}; a page or a sign-in takes several turns (routing, database, Argon2id in the thread pool, the response), and the load generator takes CPU from the same ${cores} cores.`,
    `- ${fmt.int(sizes.spreadAddresses)}-address flood, this build: p99 ÷ idle: page ${fmt.ratio(spread?.page ?? Number.NaN)}, POST ${fmt.ratio(spread?.post ?? Number.NaN)}, whole ${fmt.ratio(spread?.whole ?? Number.NaN)}. The fast path answered at most ${fmt.int(spread429)} of its ${fmt.int(spreadAnswered)} requests (the 429s; each address's first refusal comes from Next.js): ${fmt.fixed((100 * spread429) / Math.max(1, spreadAnswered), 1)}%. Until an address has spent its allowance (${measured.addressCapacity} requests) every request of it goes through Next.js, at ${fmt.usFromMs(spreadCpuPerRequest)} of server CPU each (${fmt.int(spreadRate)}/s); the fast path takes over only after ${fmt.int(untilAllRefused)} requests (${fmt.int(sizes.spreadAddresses)} × ${measured.addressCapacity + 1}), about ${fmt.int(untilAllRefused / spreadRate)} s at this rate${oneAddressFlood ? `, and the flood then costs what the one-address flood does (${fmt.usFromMs(oneAddressFlood.cpuMs / Math.max(1, answered(oneAddressFlood)))} per request under the user's run)` : ""}.`,
    "",
    `Errors / timeouts reported by autocannon over every flood above: ${fmt.int(allFloods.reduce((sum, flood) => sum + flood.errors, 0))} / ${fmt.int(allFloods.reduce((sum, flood) => sum + flood.timeouts, 0))}.`,
  ].join("\n");

  const headlines = [
    `Flood from one address: ${fmt.int(openings.get(after)!.reachedArgon2)} of ${fmt.int(answered(openings.get(after)!.flood))} opening requests reached Argon2id (policy allows ${fmt.int(openings.get(after)!.allowance)}); a repeated refusal costs ${fmt.usFromMs(cost("refused", after))} of server CPU, **${fmt.ratio(refusedRatio)}** a static file (${fmt.usFromMs(staticAfter)})${before ? `, before the fast path ${fmt.usFromMs(cost("refused", before))}, ${fmt.ratio(beforeRatio)}` : ""}; floor (bare Node 429) ${fmt.ratio(floorRatio)}`,
    `Legitimate user during a one-address flood at full load: p99 page ${fmt.ratio(oneAddress?.page ?? Number.NaN)}, sign-in ${fmt.ratio(oneAddress?.whole ?? Number.NaN)} idle${oneAddressBefore ? ` (before: ${fmt.ratio(oneAddressBefore.page)}, ${fmt.ratio(oneAddressBefore.whole)})` : ""}; from ${fmt.int(sizes.spreadAddresses)} addresses: ${fmt.ratio(spread?.page ?? Number.NaN)}, ${fmt.ratio(spread?.whole ?? Number.NaN)}, the fast path answering ${fmt.fixed((100 * spread429) / Math.max(1, spreadAnswered), 1)}% until each address has spent its allowance`,
  ];
  return { markdown, headlines };
}

/**
 * Gatehouse benchmarks and attack drills.
 *
 *   npm run bench                          every part; writes bench/RESULTS.md
 *   npm run bench -- --part limiter        one part (repeat --part, or a comma list, for several)
 *   npm run bench -- --smoke               tiny sizes, a few minutes, writes nothing (CI runs this after npm test)
 *   npm run bench -- --build               run `next build` first even if a build exists
 *   npm run bench -- --compare DIR         parts 2, 13 and 15 also measure the production build in DIR (another
 *                                          checkout, e.g. the commit before a change) side by side
 *
 * Parts: limiter, flood, distributed, memory, argon2, lockout, pow, retention, answers, passkeys, peer, stuffing, precision, connections, cost, faults.
 * flood, distributed, lockout, answers, passkeys, peer, stuffing, precision, connections, cost and faults start the production server (`node server.mjs`) from .next; a full run builds it when
 * .next/BUILD_ID is missing, a smoke run skips those parts instead. pow runs the proof of work in
 * Node and in Chromium (CHROMIUM_PATH, else /usr/bin/chromium; skipped with a note when there is
 * none). All load goes to 127.0.0.1 and every loop is bounded.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { messageOf } from "@/lib/log/message";
import { closeConnections } from "./lib/http";
import { describeMachine, machineMarkdown } from "./lib/machine";
import { COMPARING_PARTS, reproduce, type Part, type PartId } from "./lib/part";
import { writeResults, type Section } from "./lib/results";
import { buildFreshness, DRILL_SETTINGS, ensureBuild, hasBuild, startServer, withServer, type BenchServer } from "./lib/server";
import { argon2Part } from "./parts/argon2";
import { distributedPart } from "./parts/distributed";
import { floodPart } from "./parts/flood";
import { limiterPart } from "./parts/limiter";
import { lockoutPart } from "./parts/lockout";
import { memoryPart } from "./parts/memory";
import { powPart } from "./parts/pow";
import { retentionPart } from "./parts/retention";
import { answersPart } from "./parts/answers";
import { passkeysPart } from "./parts/passkeys";
import { peerPart } from "./parts/peer";
import { precisionPart } from "./parts/precision";
import { stuffingPart } from "./parts/stuffing";
import { connectionsPart } from "./parts/connections";
import { costPart } from "./parts/cost";
import { faultsPart } from "./parts/faults";

const PARTS: readonly Part[] = [
  limiterPart,
  floodPart,
  distributedPart,
  memoryPart,
  argon2Part,
  lockoutPart,
  powPart,
  retentionPart,
  answersPart,
  passkeysPart,
  peerPart,
  stuffingPart,
  precisionPart,
  connectionsPart,
  costPart,
  faultsPart,
];
const SERVER_PARTS: ReadonlySet<PartId> = new Set([
  "flood",
  "distributed",
  "lockout",
  "answers",
  "passkeys",
  "peer",
  "stuffing",
  "precision",
  "connections",
  "cost",
  "faults",
]);
// Hard stops, whatever a part does: the bench must end by itself. The other parts' last runs add up
// to about 45–50 minutes on 2 vCPUs, and part 11 (3 rounds) to about 95 (94 on an AMD EPYC; its floods go on
// to 100,000 addresses, which the door lets in at about 160 a second), so a full run gets 190. Part 13 has
// not run at full size yet; its bounds allow it about 40 minutes (3 rounds × 2 contenders, each a setup,
// a 120 s window and at most 3 waits of 60 s), so a run with it gets 40 more.
const FULL_RUN_LIMIT_MS = 230 * 60_000;
// Part 11 starts seven servers of its own (four contenders, and three of them again for the flood)
// even at smoke size.
const SMOKE_RUN_LIMIT_MS = 15 * 60_000;

type Options = { parts: Part[]; smoke: boolean; build: boolean; compare?: string };

function usage(): string {
  return `usage: npm run bench [-- --part ${PARTS.map((part) => part.id).join("|")}] [--smoke] [--build] [--compare DIR]`;
}

function parseArgs(argv: readonly string[]): Options {
  const wanted = new Set<string>();
  let smoke = false;
  let build = false;
  let compare: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--smoke") smoke = true;
    else if (arg === "--build") build = true;
    else if (arg === "--part" || arg.startsWith("--part=")) {
      const value = arg === "--part" ? argv[++i] : arg.slice("--part=".length);
      if (!value) throw new Error(`--part needs a value\n${usage()}`);
      for (const id of value.split(",")) wanted.add(id.trim());
    } else if (arg === "--compare" || arg.startsWith("--compare=")) {
      compare = arg === "--compare" ? argv[++i] : arg.slice("--compare=".length);
      if (!compare) throw new Error(`--compare needs a directory\n${usage()}`);
    } else if (arg === "--help" || arg === "-h") {
      console.log(usage());
      process.exit(0);
    } else throw new Error(`unknown argument ${arg}\n${usage()}`);
  }
  const unknown = [...wanted].filter((id) => !PARTS.some((part) => part.id === id));
  if (unknown.length > 0) throw new Error(`unknown part ${unknown.join(", ")}\n${usage()}`);
  return { parts: wanted.size === 0 ? [...PARTS] : PARTS.filter((part) => wanted.has(part.id)), smoke, build, compare };
}

async function main(): Promise<number> {
  const options = parseArgs(process.argv.slice(2));
  const root = path.resolve(__dirname, "..");
  const runStartedMs = performance.now();
  // Progress lines carry the seconds since the start, so slow steps show.
  const say = (line: string) =>
    console.log(line.startsWith("#") || line === "" ? line : `[${((performance.now() - runStartedMs) / 1000).toFixed(1)} s] ${line}`);
  const machine = describeMachine(root);
  const limitMs = options.smoke ? SMOKE_RUN_LIMIT_MS : FULL_RUN_LIMIT_MS;
  setTimeout(() => {
    console.error(`bench: stopped after ${limitMs / 60_000} minutes (hard limit)`);
    process.exit(2);
  }, limitMs).unref();

  console.log(`# Gatehouse bench${options.smoke ? " (smoke: tiny sizes, figures not meaningful)" : ""}`);
  console.log(machineMarkdown(machine));

  const needsServer = options.parts.some((part) => SERVER_PARTS.has(part.id));
  let serverUnavailable: string | undefined;
  if (needsServer) {
    if (options.smoke && !hasBuild(root)) serverUnavailable = "skipped: no production build (.next/BUILD_ID); run `npm run build` first";
    else ensureBuild(root, say, options.build && !options.smoke);
  }
  // A build older than the code measures old code: said on screen and next to the figures.
  let buildNote = "";
  if (needsServer && !serverUnavailable) {
    const { builtAt, newerFiles } = buildFreshness(root);
    buildNote = ` Production build of ${builtAt.toISOString()}${newerFiles.length > 0 ? `, **older than ${newerFiles.length} source file(s)** (e.g. ${newerFiles.slice(0, 3).join(", ")}): rebuild with \`npm run build\` or \`--build\`` : " (current with the sources)"}.`;
    if (newerFiles.length > 0)
      say(
        `warning: the production build is older than ${newerFiles.length} source file(s), e.g. ${newerFiles.slice(0, 3).join(", ")}; the drills measure the build`,
      );
  }

  // The checkout to compare with: its own production build, its commit named beside its figures.
  let compare: { root: string; commit: string } | undefined;
  if (options.compare && options.parts.some((part) => COMPARING_PARTS.has(part.id))) {
    const compareRoot = path.resolve(options.compare);
    if (!fs.existsSync(path.join(compareRoot, "server.mjs")) || !hasBuild(compareRoot)) {
      throw new Error(
        `--compare ${compareRoot}: expected a checkout with a production build (server.mjs and .next/BUILD_ID); run \`npm ci && npm run build\` there`,
      );
    }
    let commit = "unknown";
    try {
      commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: compareRoot, encoding: "utf8" }).trim();
    } catch {
      // Not a git checkout: named by its folder only.
    }
    compare = { root: compareRoot, commit };
    say(`comparing with ${compareRoot} (commit ${commit})`);
  }

  // Smoke runs share one server between the drills, started with the settings of all of them (a
  // setting two parts want differently stops the run); full runs give each drill a fresh one.
  const settingsOf = (part: Part): Record<string, string> => ({ ...DRILL_SETTINGS, ...part.serverSettings?.(options.smoke) });
  const sharedSettings: Record<string, string> = {};
  for (const part of options.smoke ? options.parts.filter((each) => SERVER_PARTS.has(each.id)) : []) {
    for (const [name, value] of Object.entries(settingsOf(part))) {
      if (name in sharedSettings && sharedSettings[name] !== value)
        throw new Error(`smoke: parts want ${name}=${sharedSettings[name]} and ${name}=${value} on the one shared server`);
      sharedSettings[name] = value;
    }
  }
  // The shared server names itself "localhost" when any part needs a domain (WebAuthn's RP ID).
  const sharedHost = options.parts.some((part) => part.publicHost === "localhost") ? "localhost" : undefined;
  let shared: Promise<BenchServer> | undefined;
  const serverFor =
    (part: Part) =>
    <T>(work: (server: BenchServer) => Promise<T>): Promise<T> => {
      if (!options.smoke) return withServer(root, settingsOf(part), say, work, part.publicHost);
      shared ??= startServer(root, sharedSettings, say, sharedHost);
      return shared.then(work);
    };
  // In a smoke run the server's start (several seconds) overlaps the parts that need none.
  if (options.smoke && needsServer && !serverUnavailable) {
    shared = startServer(root, sharedSettings, say, sharedHost);
    shared.catch(() => {});
  }

  const sections: Section[] = [];
  let failed = 0;
  // A smoke run does the parts without a server first, while the shared one starts.
  const order = options.smoke
    ? [...options.parts].sort((a, b) => Number(SERVER_PARTS.has(a.id)) - Number(SERVER_PARTS.has(b.id)))
    : options.parts;
  for (const part of order) {
    say("");
    say(`## ${part.title}`);
    if (SERVER_PARTS.has(part.id) && serverUnavailable) {
      say(serverUnavailable);
      continue;
    }
    const startedMs = performance.now();
    // Other work on the machine skews every figure; the load average says how much there was.
    const loadBefore = os.loadavg()[0]!;
    try {
      const comparing = COMPARING_PARTS.has(part.id) ? compare : undefined;
      const report = await part.run({ smoke: options.smoke, root, say, withServer: serverFor(part), compare: comparing });
      const load = `1-minute load average ${loadBefore.toFixed(2)} before, ${os.loadavg()[0]!.toFixed(2)} after`;
      const built = SERVER_PARTS.has(part.id) ? buildNote : "";
      const measured = `Measured ${new Date().toISOString()} (commit ${machine.commit}; ${machine.cpus} × ${machine.cpuModel}) in ${((performance.now() - startedMs) / 1000).toFixed(0)} s; ${load}.${built} Reproduce: \`${reproduce(part.id, comparing?.root)}\``;
      const markdown = [`## ${part.title}`, "", measured, "", report.markdown].join("\n");
      console.log("");
      console.log(report.markdown);
      sections.push({ id: part.id, markdown, headlines: report.headlines });
    } catch (error) {
      failed++;
      console.error(`${part.id} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    }
  }

  if (shared) await (await shared.catch(() => undefined))?.stop();

  say("");
  say("## Headlines");
  for (const section of sections) for (const line of section.headlines) say(`- ${line}`);

  if (!options.smoke && sections.length > 0) {
    const file = path.join(root, "bench", "RESULTS.md");
    const header = [
      "# Gatehouse: benchmark results",
      "",
      "Written by `npm run bench` (`bench/run.ts`); do not edit by hand. Every figure comes from a run on a 2-core machine of the kind below (the last run's); parts run on different days may have run on different CPUs, so each section names its commit, its CPU (since 2026-12-02) and the command that reproduces it. The HTTP drills (parts 2, 3, 6, 9, 10, 11, 12 and 13) need a production build (`npm run build`; the bench runs it when `.next/BUILD_ID` is missing), and part 2's before column (and part 13's compared build) a second checkout with its own build (`--compare DIR`); part 7 needs Chromium (`CHROMIUM_PATH`, else `/usr/bin/chromium`). What each part measures, and how to run one: [README.md](README.md). The machine is shared with other sessions (its load average is written beside each part): the parts that compare run their contenders in alternating rounds within one run and give ranges over the rounds.",
      "",
      "## Machine of the last run",
      "",
      machineMarkdown(machine),
      `- Last written: ${machine.date}`,
    ].join("\n");
    writeResults(
      file,
      PARTS.map((part) => part.id),
      header,
      sections,
    );
    say(`\nwrote ${path.relative(process.cwd(), file)}`);
  }
  return failed === 0 ? 0 : 1;
}

main()
  .then((code) => {
    closeConnections();
    process.exit(code);
  })
  .catch((error: unknown) => {
    console.error(messageOf(error));
    process.exit(1);
  });

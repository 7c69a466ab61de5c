import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { LEAN_START } from "../../lib/server-contract.mjs";
import { request } from "./http";
import { sleep } from "./stats";

/**
 * The production server for the HTTP drills. It is `node server.mjs`, not `next start`: only
 * server.mjs stamps the socket address on each request, so only it gives the limiter a client
 * address (and honours TRUSTED_PROXIES). Under `next start` every request would share one
 * fail-closed bucket and the drills would measure nothing real.
 */
export type BenchServer = {
  baseUrl: string;
  /** NEXTAUTH_URL: the origin the server believes it has (its RP ID for WebAuthn is this host). */
  publicUrl: string;
  /** NEXTAUTH_SECRET, for drills that sign what the account page would (its session form token). */
  secret: string;
  pid: number;
  /** MAIL_OUTBOX_DIR: with no SMTP server, every mail the server sends is a file here (lib/mail/outbox.ts). */
  outboxDir: string;
  /** How often each pino `event` was logged since the start; with `lane`, only lines with that `lane` field. */
  eventCount(event: string, lane?: string): number;
  /** Lines the server logged at level error or above (pino >= 50), and anything on stderr. */
  errorLines(): string[];
  /** CPU time (user + system) of the server process and its children, in ms. */
  cpuMs(): number;
  /** Resolves when `event` has been logged `count` times, or after `timeoutMs`. */
  waitForEvents(event: string, count: number, timeoutMs: number): Promise<boolean>;
  /** kill -9: the process ends at once, nothing of it runs; unlike stop(), every folder is kept. */
  kill(): Promise<void>;
  stop(): Promise<void>;
};

// Generous: on a shared 2-core machine under load a start has taken over 90 s.
const START_TIMEOUT_MS = 180_000;

/**
 * What the drills change from the defaults: a small proof of work, so that the bench can pay for
 * thousands of solutions (verifying one costs the server the same at any size), and challenges
 * that outlive the preparation of a long drill.
 */
export const DRILL_SETTINGS: Readonly<Record<string, string>> = { ALTCHA_MAX_COUNTER: "1000", ALTCHA_EXPIRES_SECONDS: "3600" };
const STOP_TIMEOUT_MS = 10_000;

export function buildIdPath(root: string): string {
  return path.join(root, ".next", "BUILD_ID");
}

export function hasBuild(root: string): boolean {
  return fs.existsSync(buildIdPath(root));
}

// What a production build is made from: a file here newer than .next/BUILD_ID means a stale build.
const BUILD_INPUTS = [
  "app",
  "lib",
  "prisma",
  "public",
  "proxy.ts",
  "instrumentation.ts",
  "next.config.ts",
  "server.mjs",
  "package-lock.json",
];

/** When the production build was written, and the source files changed since (none: it is current). */
export function buildFreshness(root: string): { builtAt: Date; newerFiles: string[] } {
  const builtAtMs = fs.statSync(buildIdPath(root)).mtimeMs;
  const newerFiles: string[] = [];
  for (const input of BUILD_INPUTS) {
    const full = path.join(root, input);
    if (!fs.existsSync(full)) continue;
    const files = fs.statSync(full).isDirectory()
      ? fs.readdirSync(full, { recursive: true, encoding: "utf8" }).map((file) => path.join(input, file))
      : [input];
    for (const file of files) {
      const stat = fs.statSync(path.join(root, file));
      // Tests are not part of the build.
      if (stat.isFile() && stat.mtimeMs > builtAtMs && !/\.test\.tsx?$/.test(file)) newerFiles.push(file);
    }
  }
  return { builtAt: new Date(builtAtMs), newerFiles };
}

// The bench sends nothing off the machine: Next.js's telemetry is off for its build and its servers.
const NO_TELEMETRY = { NEXT_TELEMETRY_DISABLED: "1" } as const;

/** Runs `next build` when there is no production build yet (or when asked to). */
export function ensureBuild(root: string, say: (line: string) => void, force = false): void {
  if (hasBuild(root) && !force) return;
  say(force ? "building (--build): next build" : "no production build (.next/BUILD_ID): running next build");
  const env = { ...process.env, ...NO_TELEMETRY };
  execFileSync(path.join(root, "node_modules", ".bin", "next"), ["build"], { cwd: root, env, stdio: "inherit", timeout: 15 * 60_000 });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

let clockTicksPerSecond: number | undefined;
function ticksPerSecond(): number {
  if (clockTicksPerSecond === undefined) {
    try {
      clockTicksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      clockTicksPerSecond = 100;
    }
  }
  return clockTicksPerSecond;
}

type ProcStat = { pid: number; ppid: number; cpuTicks: number };

function readStat(pid: number): ProcStat | null {
  try {
    const text = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may contain spaces; fields after the last ")" are positional.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { pid, ppid: Number(fields[1]), cpuTicks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return null;
  }
}

/** CPU time (user + system) of `rootPid` and every descendant still alive, in ms. */
export function processTreeCpuMs(rootPid: number): number {
  return (treeCpuTicks(rootPid) * 1000) / ticksPerSecond();
}

/** Summed CPU ticks of `rootPid` and every descendant still alive. */
function treeCpuTicks(rootPid: number): number {
  const stats = fs
    .readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readStat(Number(name)))
    .filter((stat): stat is ProcStat => stat !== null);
  const inTree = new Set([rootPid]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const stat of stats) {
      if (!inTree.has(stat.pid) && inTree.has(stat.ppid)) {
        inTree.add(stat.pid);
        grew = true;
      }
    }
  }
  return stats.filter((stat) => inTree.has(stat.pid)).reduce((sum, stat) => sum + stat.cpuTicks, 0);
}

// Servers still running, killed on any exit of the bench so none outlives it.
const running = new Set<ChildProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const child of running) child.kill("SIGKILL");
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      for (const child of running) child.kill("SIGKILL");
      process.exit(130);
    });
  }
}

/** Kills `child` with the bench if it is still running then (drill helpers: load generators, the bare server). */
export function killOnExit(child: ChildProcess): void {
  installExitHook();
  running.add(child);
  child.once("exit", () => running.delete(child));
}

/**
 * How the server names itself in NEXTAUTH_URL. It listens on 127.0.0.1 either way; "localhost"
 * is for drills that use WebAuthn, whose RP ID must be a domain, never an IP address.
 */
export type PublicHost = "127.0.0.1" | "localhost";

/**
 * Starts `node server.mjs` on a free loopback port with a fresh PGlite database, a random secret
 * and the given settings on top of the bench defaults. The environment is built from scratch so
 * settings of the calling shell (or of vitest) cannot leak into the measured configuration.
 */
export async function startServer(
  root: string,
  settings: Record<string, string>,
  say: (line: string) => void,
  publicHost: PublicHost = "127.0.0.1",
  /** A lower open-files limit than the bench's (`ulimit -n`, set by the shell that then becomes node). */
  openFilesLimit?: number,
): Promise<BenchServer> {
  installExitHook();
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const publicUrl = `http://${publicHost}:${port}`;
  const secret = randomBytes(32).toString("hex");
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-bench-"));
  // The bench's own outbox beside the database (removed with it), unless a part names another.
  const ownOutbox = `${dataDir}-outbox`;
  const outboxDir = settings.MAIL_OUTBOX_DIR ?? ownOutbox;
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? os.tmpdir(),
    TMPDIR: os.tmpdir(),
    NODE_ENV: "production",
    PORT: String(port),
    HOST: "127.0.0.1",
    DATABASE_URL: `pglite:${dataDir}`,
    NEXTAUTH_SECRET: secret,
    NEXTAUTH_URL: publicUrl,
    // A local http:// test server: session cookies cannot be Secure here.
    ALLOW_INSECURE_COOKIES: "true",
    LOG_LEVEL: "info",
    // The bench client is the proxy: it names each simulated client in X-Forwarded-For.
    TRUSTED_PROXIES: "127.0.0.1,::1",
    ...NO_TELEMETRY,
    // The drills sign in right after registering (201 before email verification existed, 202 since).
    REQUIRE_EMAIL_VERIFICATION: "false",
    MAIL_OUTBOX_DIR: ownOutbox,
    ...settings,
  } as NodeJS.ProcessEnv;

  // Started as every deployment starts it: lean (lib/server-contract.mjs).
  // BENCH_SERVER_NODE_FLAGS: more node flags for the app server, e.g. a profiler (bench/lib/profile-hook.mjs).
  const extraFlags = (process.env.BENCH_SERVER_NODE_FLAGS ?? "").split(" ").filter((flag) => flag !== "");
  const args = [...LEAN_START.nodeFlags, ...extraFlags, "server.mjs"];
  const [command, commandArgs] = openFilesLimit
    ? ["bash", ["-c", `ulimit -n ${openFilesLimit} && exec "$0" "$@"`, process.execPath, ...args]]
    : [process.execPath, args];
  const child = spawn(command, commandArgs, {
    cwd: root,
    env: { ...LEAN_START.environment, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  const counts = new Map<string, number>();
  const waiters = new Set<() => void>();
  const tail: string[] = [];
  const errors: string[] = [];
  const remember = (line: string) => {
    tail.push(line);
    if (tail.length > 40) tail.shift();
  };
  readline.createInterface({ input: child.stdout! }).on("line", (line) => {
    let event: unknown;
    let lane: unknown;
    try {
      const parsed = JSON.parse(line) as { event?: unknown; level?: unknown; lane?: unknown };
      event = parsed.event;
      lane = parsed.lane;
      if (typeof parsed.level === "number" && parsed.level >= 50) errors.push(line);
    } catch {
      remember(line);
      return;
    }
    if (typeof event === "string") {
      counts.set(event, (counts.get(event) ?? 0) + 1);
      // Sign-in events name the hash budget's lane (trusted: a known device).
      if (typeof lane === "string") counts.set(`${event}\u0000${lane}`, (counts.get(`${event}\u0000${lane}`) ?? 0) + 1);
      for (const wake of waiters) wake();
    }
    if (!line.includes('"level":30')) remember(line);
  });
  readline.createInterface({ input: child.stderr! }).on("line", (line) => {
    remember(line);
    // One entry per error, not per stack frame.
    if (!/^\s+at /.test(line)) errors.push(line);
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      running.delete(child);
      resolve(code);
    }),
  );

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const stopped = await Promise.race([exited.then(() => true), sleep(STOP_TIMEOUT_MS).then(() => false)]);
      if (!stopped) {
        child.kill("SIGKILL");
        await exited;
      }
    }
    // The database folder, the lock folder PGlite's owner keeps beside it, and the bench's outbox.
    for (const folder of [dataDir, `${dataDir}.lock`, ownOutbox]) {
      try {
        fs.rmSync(folder, { recursive: true, force: true, maxRetries: 3 });
      } catch (error) {
        say(`could not remove ${folder}: ${String(error)}`);
      }
    }
  };

  // Ready when health answers; a server that dies first fails the part with its last lines.
  const deadline = Date.now() + START_TIMEOUT_MS;
  let ready = false;
  while (!ready && Date.now() < deadline && child.exitCode === null) {
    try {
      ready = (await request(baseUrl, { method: "GET", path: "/api/health" }, 2_000)).status === 200;
    } catch {
      // Not listening yet.
    }
    if (!ready) await sleep(200);
  }
  if (!ready) {
    await stop();
    throw new Error(`server did not become ready at ${baseUrl}:\n${tail.join("\n")}`);
  }
  say(`server pid ${child.pid} ready at ${baseUrl}`);

  return {
    baseUrl,
    publicUrl,
    secret,
    pid: child.pid!,
    outboxDir,
    eventCount: (event, lane) => counts.get(lane === undefined ? event : `${event}\u0000${lane}`) ?? 0,
    errorLines: () => [...errors],
    cpuMs: () => processTreeCpuMs(child.pid!),
    async waitForEvents(event, count, timeoutMs) {
      const until = Date.now() + timeoutMs;
      while ((counts.get(event) ?? 0) < count && Date.now() < until) {
        await new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            waiters.delete(wake);
            resolve();
          };
          const timer = setTimeout(wake, Math.max(1, until - Date.now()));
          waiters.add(wake);
        });
      }
      return (counts.get(event) ?? 0) >= count;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
    stop,
  };
}

/** Starts a server, runs `work`, and stops the server whatever happens. */
export async function withServer<T>(
  root: string,
  settings: Record<string, string>,
  say: (line: string) => void,
  work: (server: BenchServer) => Promise<T>,
  publicHost?: PublicHost,
): Promise<T> {
  const server = await startServer(root, settings, say, publicHost);
  try {
    return await work(server);
  } finally {
    await server.stop();
  }
}

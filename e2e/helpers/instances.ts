import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { freePort } from "../../tests/helpers/ports";

export type Instance = {
  baseURL: string;
  /** The server's process id (the shell that set an open-file limit becomes node: same id). */
  pid: number;
  /** SIGTERM, then the exit code once the process has exited. */
  stop(): Promise<number | null>;
  /** Sends a signal without waiting. */
  signal(name: NodeJS.Signals): void;
  /** The exit code, once the process has exited. */
  exited: Promise<number | null>;
  output(): string;
};

/**
 * Starts one more production server (`node server.mjs`, the same build the suite uses) with
 * its own port and environment, and waits until /api/health answers. `hostname: "localhost"`
 * for WebAuthn, whose RP ID cannot be an IP address (the server still listens on 127.0.0.1).
 */
export async function startInstance(
  env: Record<string, string>,
  options: { hostname?: "localhost"; openFilesLimit?: number; startTimeoutMs?: number } = {},
): Promise<Instance> {
  return start(
    ["server.mjs"],
    (baseURL) => ({
      NODE_ENV: "production",
      NEXTAUTH_URL: baseURL,
      // A local http:// test server: session cookies cannot be Secure here.
      ALLOW_INSECURE_COOKIES: "true",
      LOG_LEVEL: "warn",
      TRUSTED_PROXIES: "127.0.0.1,::1",
      ALTCHA_MAX_COUNTER: "2000",
      MAIL_OUTBOX_DIR: process.env.E2E_OUTBOX_DIR ?? ".data/outbox",
      ...env,
    }),
    { hostname: options.hostname, openFilesLimit: options.openFilesLimit, startTimeoutMs: options.startTimeoutMs },
  );
}

/**
 * Starts the development server as `npm run dev` does (`node server.mjs --dev`), with the
 * newcomer's settings: no NEXTAUTH_URL and no NEXTAUTH_SECRET, only PORT, HOST and `env` (its own
 * data and outbox folders). It compiles each page on its first request, so callers allow for that.
 * Its address is http://localhost:PORT, as it prints (it listens on 127.0.0.1).
 */
export async function startDevServer(env: Record<string, string>, startTimeoutMs = 120_000): Promise<Instance> {
  return start(["server.mjs", "--dev"], () => ({ NODE_ENV: "development", LOG_LEVEL: "warn", ...env }), {
    startTimeoutMs,
    unset: ["NEXTAUTH_URL", "NEXTAUTH_SECRET"],
    hostname: "localhost",
  });
}

/** Spawns `node <args>` on a free port of 127.0.0.1 with `env(baseURL)` over this process's environment minus `unset`. */
async function start(
  args: string[],
  env: (baseURL: string) => Record<string, string>,
  {
    startTimeoutMs = 60_000,
    unset = [],
    hostname = "127.0.0.1",
    openFilesLimit,
  }: { startTimeoutMs?: number; unset?: string[]; hostname?: string | undefined; openFilesLimit?: number | undefined } = {},
): Promise<Instance> {
  const port = await freePort();
  const baseURL = `http://${hostname}:${port}`;
  let output = "";
  const inherited = { ...process.env };
  for (const name of unset) delete inherited[name];
  // A lower open-file limit than the runner's (the systemd default is 1,024): set by the shell that then becomes node.
  const [command, commandArgs] = openFilesLimit
    ? ["bash", ["-c", `ulimit -n ${openFilesLimit} && exec "$0" "$@"`, process.execPath, ...args]]
    : [process.execPath, args];
  const child: ChildProcess = spawn(command, commandArgs, {
    env: {
      ...inherited,
      PORT: String(port),
      HOST: "127.0.0.1",
      ...env(baseURL),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`instance on ${port} exited: ${output}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/health`)).ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      // Not left running: it would hold its database folder against the retry.
      child.kill("SIGTERM");
      throw new Error(`instance on ${port} did not start: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    baseURL,
    pid: child.pid!,
    output: () => output,
    exited,
    signal: (name) => void child.kill(name),
    stop: () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

/** Secrets shared by the instances of one deployment (sessions and ALTCHA must verify on both). */
export function sharedSecrets(): Record<string, string> {
  return { NEXTAUTH_SECRET: randomBytes(32).toString("hex") };
}

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
 * its own port and environment, and waits until /api/health answers.
 */
export async function startInstance(env: Record<string, string>, options: { openFilesLimit?: number } = {}): Promise<Instance> {
  const port = await freePort();
  const baseURL = `http://127.0.0.1:${port}`;
  let output = "";
  // A lower open-file limit than the runner's (the systemd default is 1,024): set by the shell that then becomes node.
  const [command, args] = options.openFilesLimit
    ? ["bash", ["-c", `ulimit -n ${options.openFilesLimit} && exec "$0" server.mjs`, process.execPath]]
    : [process.execPath, ["server.mjs"]];
  const child: ChildProcess = spawn(command, args, {
    env: {
      ...process.env,
      NODE_ENV: "production",
      PORT: String(port),
      HOST: "127.0.0.1",
      NEXTAUTH_URL: baseURL,
      // A local http:// test server: session cookies cannot be Secure here.
      ALLOW_INSECURE_COOKIES: "true",
      LOG_LEVEL: "warn",
      TRUSTED_PROXIES: "127.0.0.1,::1",
      ALTCHA_MAX_COUNTER: "2000",
      MAIL_OUTBOX_DIR: process.env.E2E_OUTBOX_DIR ?? ".data/outbox",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`instance on ${port} exited: ${output}`);
    try {
      if ((await fetch(`${baseURL}/api/health`)).ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`instance on ${port} did not start: ${output}`);
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

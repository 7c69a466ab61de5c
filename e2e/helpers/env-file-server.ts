import { spawn, type ChildProcess } from "node:child_process";
import { LEAN_START } from "../../lib/server-contract.mjs";

export type EnvFileServer = { child: ChildProcess; exited: Promise<number | null>; output(): string };

/**
 * `node --env-file=<file> server.mjs` in `folder`, started lean as an operator starts an instance
 * (LEAN_START): nothing of this process's environment but PATH and LEAN_START's variables, plus
 * `env` (which wins over the file, as node does).
 */
export function startWithEnvFile(folder: string, envFile: string, env: Record<string, string> = {}): EnvFileServer {
  let output = "";
  const child: ChildProcess = spawn(process.execPath, [...LEAN_START.nodeFlags, `--env-file=${envFile}`, "server.mjs"], {
    cwd: folder,
    // (Next's types declare NODE_ENV always set.)
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...LEAN_START.environment, ...env } as unknown as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, exited, output: () => output };
}

/** Waits until /api/health answers; throws with the server's output if it exits or takes over 180 s (a busy shared machine). */
export async function healthy(baseURL: string, server: EnvFileServer): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (server.child.exitCode !== null) throw new Error(`the server exited (${server.child.exitCode}): ${server.output()}`);
    try {
      if ((await fetch(`${baseURL}/api/health`)).ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`the server did not start: ${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

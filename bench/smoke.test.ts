import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";
import { PART_TITLES } from "./lib/part";

const root = fileURLToPath(new URL("..", import.meta.url));
const SMOKE_TIMEOUT_MS = 60_000;

/**
 * Proves the bench scripts still run: every part at tiny sizes (`npm run bench -- --smoke`).
 * No timing is asserted. The HTTP drills run only when a production build exists; otherwise
 * they print that they were skipped, and their heading still appears.
 */
test(
  "the bench runs every part in smoke mode",
  async () => {
    const env = { ...process.env };
    // vitest's settings for unit tests (fast Argon2 profile, silent logs, tiny proof of work) are not the bench's.
    for (const name of ["ARGON2_PROFILE", "LOG_LEVEL", "ALTCHA_MAX_COUNTER"]) delete env[name];
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      // SIGTERM on timeout: the bench then stops the server it started before exiting.
      const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", "bench/run.ts", "--smoke"], {
        cwd: root,
        env,
        stdio: ["ignore", "pipe", "pipe"],
        signal: AbortSignal.timeout(SMOKE_TIMEOUT_MS - 5_000),
        killSignal: "SIGTERM",
      });
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.on("error", () => {});
      child.on("close", (exitCode) => resolve({ code: exitCode, output }));
    });
    expect(code, output).toBe(0);
    for (const title of Object.values(PART_TITLES)) expect(output).toContain(`## ${title}`);
  },
  SMOKE_TIMEOUT_MS,
);

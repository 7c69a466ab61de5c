import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Runs `scripts/<name>.ts` as `npm run …` does (through tsx), with `env`; its exit code and output. */
export async function runScript(name: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [path.resolve("node_modules/tsx/dist/cli.mjs"), `scripts/${name}.ts`, ...args], {
      env,
      timeout: 60_000,
    });
    return { code: 0, out: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, out: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

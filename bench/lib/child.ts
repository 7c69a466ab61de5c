import { execFile } from "node:child_process";
import path from "node:path";

const CHILD_TIMEOUT_MS = 5 * 60_000;

/**
 * Runs bench/parts/`script` in a process of its own (tsx, --expose-gc) with `input` as JSON, for
 * figures no other work of the bench may share (memory above all), and returns the JSON result
 * it prints as its last line.
 */
export function runJsonChild<Input, Output>(root: string, script: string, input: Input, name: string): Promise<Output> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--expose-gc", "--import", "tsx", path.join(root, "bench", "parts", script), JSON.stringify(input)],
      { cwd: root, timeout: CHILD_TIMEOUT_MS, killSignal: "SIGKILL", maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`${name} failed: ${error.message}\n${stderr}`));
        try {
          resolve(JSON.parse(stdout.trim().split("\n").at(-1) ?? "") as Output);
        } catch {
          reject(new Error(`${name} printed no result:\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}

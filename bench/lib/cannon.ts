import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import type { CannonInput, CannonOutput } from "./cannon-child";
import { killOnExit } from "./server";

export type { CannonInput, CannonLoad, CannonOutput } from "./cannon-child";

/** A flood's answers, with `cpuMs`: what `cpu` measured from its first request to its end. */
export type Flood = CannonOutput & { cpuMs: number };

type Pending = {
  cpu: () => number;
  onStart?: () => void;
  cpuStartMs: number;
  resolve(flood: Flood): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
};

/**
 * The load generator of the HTTP drills: autocannon in a process of its own
 * (bench/lib/cannon-child.ts), started once and given one flood at a time. `cpu` (a process
 * tree's CPU in ms) is read when the flood starts and when it ends, so the child's start-up and
 * the parent's bookkeeping stay out of the window. Each flood is bounded by its duration plus a
 * margin; `close()` ends the child.
 */
export class FloodClient {
  private readonly child: ChildProcess;
  private pending: Pending | undefined;
  private stderr = "";

  constructor(root: string) {
    const script = path.join(root, "bench", "lib", "cannon-child.ts");
    this.child = spawn(process.execPath, ["--import", "tsx", script], { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
    killOnExit(this.child);
    this.child.stderr!.on("data", (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString()).slice(-4000)));
    readline.createInterface({ input: this.child.stdout! }).on("line", (line) => this.onLine(line));
    this.child.once("exit", (code) => this.fail(new Error(`flood child exited with ${code}: ${this.stderr}`)));
  }

  run(input: CannonInput, cpu: () => number, onStart?: () => void): Promise<Flood> {
    if (this.pending) return Promise.reject(new Error("one flood at a time"));
    return new Promise<Flood>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          this.child.kill("SIGKILL");
          this.fail(new Error(`flood did not end within ${input.durationSeconds + 60} s`));
        },
        (input.durationSeconds + 60) * 1000,
      );
      this.pending = { cpu, onStart, cpuStartMs: Number.NaN, resolve, reject, timer };
      this.child.stdin!.write(`${JSON.stringify(input)}\n`);
    });
  }

  /** Ends the running flood early; its promise resolves with what it did so far. */
  stop(): void {
    if (this.pending) this.child.stdin!.write("stop\n");
  }

  close(): void {
    this.child.stdin!.end();
  }

  private onLine(line: string): void {
    const pending = this.pending;
    let parsed: (Partial<CannonOutput> & { start?: boolean }) | undefined;
    try {
      parsed = JSON.parse(line) as Partial<CannonOutput> & { start?: boolean };
    } catch {
      return;
    }
    if (!pending) return;
    if (parsed.start) {
      pending.cpuStartMs = pending.cpu();
      pending.onStart?.();
    } else if (parsed.statuses) {
      const cpuMs = pending.cpu() - pending.cpuStartMs;
      clearTimeout(pending.timer);
      this.pending = undefined;
      pending.resolve({ ...(parsed as CannonOutput), cpuMs });
    }
  }

  private fail(error: Error): void {
    const pending = this.pending;
    if (!pending) return;
    clearTimeout(pending.timer);
    this.pending = undefined;
    pending.reject(error);
  }
}

export const answered = (flood: Pick<CannonOutput, "statuses">): number => Object.values(flood.statuses).reduce((sum, n) => sum + n, 0);

export const answeredWith = (flood: Pick<CannonOutput, "statuses">, ...codes: number[]): number =>
  codes.reduce((sum, code) => sum + (flood.statuses[code] ?? 0), 0);

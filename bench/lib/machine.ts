import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";

/** The machine and code a run measured, for the head of RESULTS.md. */
export type Machine = { cpus: number; cpuModel: string; memoryGiB: number; node: string; os: string; commit: string; date: string };

function cpuModel(): string {
  try {
    const line = fs
      .readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((entry) => entry.startsWith("model name"));
    if (line) return line.split(":").slice(1).join(":").trim();
  } catch {
    // Not Linux: fall back to what Node reports.
  }
  return os.cpus()[0]?.model ?? "unknown";
}

function commit(root: string): string {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain"], { cwd: root, encoding: "utf8" }).trim() !== "";
    return dirty ? `${sha} (with uncommitted changes)` : sha;
  } catch {
    return "unknown";
  }
}

export function describeMachine(root: string): Machine {
  return {
    // nproc: the CPUs this process may use.
    cpus: os.availableParallelism(),
    cpuModel: cpuModel(),
    memoryGiB: Math.round((os.totalmem() / 1_073_741_824) * 10) / 10,
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    commit: commit(root),
    date: new Date().toISOString(),
  };
}

export function machineMarkdown(machine: Machine): string {
  return [
    `- CPU: ${machine.cpus} × ${machine.cpuModel} (nproc = ${machine.cpus})`,
    `- Memory: ${machine.memoryGiB} GiB`,
    `- Node.js ${machine.node} on ${machine.os}`,
    `- Code: commit ${machine.commit}`,
  ].join("\n");
}

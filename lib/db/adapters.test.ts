import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { closePglite, openPglite } from "./adapters";

const children: ReturnType<typeof spawn>[] = [];
afterEach(() => children.splice(0).forEach((child) => child.kill("SIGKILL")));

/** Another process that holds the data-folder lock the way a running Gatehouse does. */
function holdLockInAnotherProcess(dataDir: string): Promise<void> {
  const script = `require("proper-lockfile").lock(${JSON.stringify(dataDir)}, { lockfilePath: ${JSON.stringify(`${dataDir}.lock`)}, stale: 10000 })
    .then(() => { console.log("locked"); setInterval(() => {}, 1000); });`;
  const child = spawn(process.execPath, ["-e", script], { cwd: process.cwd(), stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  return new Promise((resolve) => child.stdout!.once("data", () => resolve()));
}

describe("openPglite", () => {
  it("refuses a data folder that another process holds, with a clear message", async () => {
    const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-lock-")), "db");
    fs.mkdirSync(dataDir);
    await holdLockInAnotherProcess(dataDir);
    await expect(openPglite(dataDir, 1_000)).rejects.toThrow(/in use by another process/);
  });

  it("opens a free folder once per process and releases it on close", async () => {
    const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-lock-")), "db");
    const first = await openPglite(dataDir);
    expect(await openPglite(dataDir)).toBe(first);
    expect(fs.existsSync(`${dataDir}.lock`)).toBe(true);
    await closePglite(first, dataDir);
    expect(fs.existsSync(`${dataDir}.lock`)).toBe(false);
  });
});

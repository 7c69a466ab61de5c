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

  /** Every entry under `dir` (itself included) whose mode lets anyone but the owner in. */
  function openToOthers(dir: string): string[] {
    const entries = [dir, ...(fs.readdirSync(dir, { recursive: true }) as string[]).map((name) => path.join(dir, name))];
    return entries.flatMap((entry) => {
      const { mode } = fs.lstatSync(entry);
      return (mode & 0o077) !== 0 ? [`${entry} ${(mode & 0o777).toString(8)}`] : [];
    });
  }

  // Issue 59: a folder the app created was 0755 and PGlite wrote its files 0666, so every local
  // user could read the password hashes, sealed TOTP secrets and digests.
  it(
    "keeps the folder 0700 and its files 0600, whoever created them, and what the database writes later",
    { timeout: 120_000 },
    async () => {
      const previous = process.umask(0o022);
      try {
        const fresh = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-modes-")), "db");
        const db = await openPglite(fresh);
        await db.exec("CREATE TABLE later (id int); INSERT INTO later SELECT generate_series(1, 1000); CHECKPOINT;");
        expect(openToOthers(fresh)).toEqual([]);
        await closePglite(db, fresh);

        // A folder an operator made (0755) with a file left readable (0644): tightened at open.
        const made = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-modes-")), "db");
        fs.cpSync(fresh, made, { recursive: true });
        fs.chmodSync(made, 0o755);
        fs.chmodSync(path.join(made, "PG_VERSION"), 0o644);
        const again = await openPglite(made);
        expect(openToOthers(made)).toEqual([]);
        await closePglite(again, made);
      } finally {
        process.umask(previous);
      }
    },
  );
});

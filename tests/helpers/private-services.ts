import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { freePort } from "./ports";

/**
 * Services a fault test may stop, pause, kill or fill: its own PostgreSQL cluster, Redis server
 * and tmpfs, never the machine's shared ones (other suites use PostgreSQL on 5432 and Redis on
 * 6379 at the same time).
 */

const asRoot = typeof process.getuid === "function" && process.getuid() === 0;

/** PostgreSQL refuses to run as root: as root, run its binaries as the `postgres` user. */
function pgCommand(binary: string, args: string[]): [string, string[]] {
  const bin = path.join(postgresBinDir(), binary);
  return asRoot ? ["runuser", ["-u", "postgres", "--", bin, ...args]] : [bin, args];
}

function postgresBinDir(): string {
  const root = "/usr/lib/postgresql";
  const versions = fs.existsSync(root) ? fs.readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const found = versions.map((version) => path.join(root, version, "bin")).find((dir) => fs.existsSync(path.join(dir, "pg_ctl")));
  if (!found) throw new Error("no PostgreSQL binaries under /usr/lib/postgresql/*/bin (apt-get install postgresql)");
  return found;
}

export type PrivatePostgres = { url: string; stop(): void; start(): void; dispose(): void };

/** A throwaway cluster in a temporary folder on a free loopback port, trust authentication. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-faults-pg-"));
  const data = path.join(root, "data");
  if (asRoot) execFileSync("chown", ["postgres:postgres", root]);
  const port = await freePort();
  const run = (binary: string, args: string[]) => {
    const [command, argv] = pgCommand(binary, args);
    execFileSync(command, argv, { stdio: "pipe" });
  };
  run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]);
  let running = false;
  const start = () => {
    if (running) return;
    run("pg_ctl", [
      "-D",
      data,
      "-l",
      path.join(root, "log"),
      "-w",
      "-o",
      `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off`,
      "start",
    ]);
    running = true;
  };
  const stop = () => {
    if (!running) return;
    run("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
    running = false;
  };
  start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query("CREATE DATABASE gatehouse");
  await admin.end();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/gatehouse`,
    stop,
    start,
    dispose: () => {
      try {
        stop();
      } catch {
        // Already stopped.
      }
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

export type PrivateRedis = {
  url: string;
  pause(): void;
  resume(): void;
  kill(): Promise<void>;
  restart(): Promise<void>;
  dispose(): Promise<void>;
};

/** A redis-server of its own on a free loopback port, no persistence. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess;
  const launch = async () => {
    child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
    for (let i = 0; i < 100; i++) {
      const up = await new Promise<boolean>((resolve) => {
        const socket = new net.Socket();
        socket.once("connect", () => (socket.destroy(), resolve(true)));
        socket.once("error", () => resolve(false));
        socket.connect(port, "127.0.0.1");
      });
      if (up) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("private redis-server did not start");
  };
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    pause: () => void child.kill("SIGSTOP"),
    resume: () => void child.kill("SIGCONT"),
    kill,
    restart: launch,
    dispose: async () => {
      child.kill("SIGCONT");
      await kill();
    },
  };
}

export type SmallDisk = { dir: string; fill(): void; free(): void; dispose(): void };

/**
 * A tmpfs of `sizeMiB` (needs root or CAP_SYS_ADMIN: CI runs as root). fill() writes one file
 * until the filesystem is full; free() deletes it.
 */
export function mountSmallDisk(sizeMiB: number): SmallDisk {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-faults-disk-"));
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeMiB}m,mode=0755`, "tmpfs", dir], { stdio: "pipe" });
  const filler = path.join(dir, "filler");
  return {
    dir,
    fill: () => {
      const chunk = Buffer.alloc(1024 * 1024, 1);
      const fd = fs.openSync(filler, "a");
      try {
        for (;;) fs.writeSync(fd, chunk);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
        // The last partial megabyte: fill to the last byte.
        for (let size = 512 * 1024; size >= 1; size = Math.floor(size / 2)) {
          try {
            for (;;) fs.writeSync(fd, chunk.subarray(0, size));
          } catch {
            // Next smaller size.
          }
        }
      } finally {
        fs.closeSync(fd);
      }
    },
    free: () => fs.rmSync(filler, { force: true }),
    dispose: () => {
      try {
        execFileSync("umount", ["-l", dir], { stdio: "pipe" });
      } catch {
        // Not mounted.
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

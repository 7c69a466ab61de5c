import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";
import { LEAN_START } from "../../lib/server-contract.mjs";
import { freePort, killOnExit } from "../lib/server";
import { sleep } from "../lib/stats";
import { ensureSqliteBinding } from "./native";

const PEER_START_TIMEOUT_MS = 60_000;

/** A running peer (server.mjs): where it listens, its folder (SQLite, and the outbox when asked for). */
export type PeerServer = { pid: number; baseUrl: string; outboxDir?: string; stop(): Promise<void> };

/**
 * Starts the peer, better-auth at its defaults (server.mjs), on a free loopback port with a fresh
 * SQLite file; `outbox`: reset mails on, written to a folder beside the database.
 */
export async function startPeer(
  root: string,
  say: (line: string) => void,
  hashing: "argon2id" | "scrypt",
  options: { outbox?: boolean } = {},
): Promise<PeerServer> {
  ensureSqliteBinding(say);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-peer-"));
  const outboxDir = options.outbox ? path.join(folder, "outbox") : undefined;
  // Started lean as Gatehouse is (lib/server-contract.mjs), so that neither gets a start the other lacks.
  const child = spawn(process.execPath, [...LEAN_START.nodeFlags, path.join(root, "bench", "peer", "server.mjs")], {
    cwd: path.join(root, "bench"),
    env: {
      ...LEAN_START.environment,
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      NODE_ENV: "production",
      PEER_PORT: String(port),
      PEER_DB: path.join(folder, "peer.sqlite"),
      PEER_SECRET: randomBytes(32).toString("hex"),
      PEER_HASH: hashing,
      ...(outboxDir ? { PEER_OUTBOX: outboxDir } : {}),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  killOnExit(child);
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const ready = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), PEER_START_TIMEOUT_MS);
    readline.createInterface({ input: child.stdout! }).on("line", (line) => line === "ready" && (clearTimeout(timer), resolve(true)));
    child.once("exit", () => (clearTimeout(timer), resolve(false)));
  });
  if (!ready) throw new Error(`the peer did not start:\n${stderr}`);
  say(`peer (${hashing}) pid ${child.pid} ready at ${baseUrl}`);
  return {
    pid: child.pid!,
    baseUrl,
    outboxDir,
    stop: async () => {
      child.kill("SIGTERM");
      await Promise.race([new Promise((resolve) => child.once("exit", resolve)), sleep(5_000)]);
      if (child.exitCode === null) child.kill("SIGKILL");
      fs.rmSync(folder, { recursive: true, force: true });
    },
  };
}

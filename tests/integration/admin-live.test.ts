import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gatehouse } from "@/lib/app";
import type { AdminChannelServer } from "@/lib/ops/admin-channel";
import { runScript } from "../helpers/cli";

/**
 * `npm run admin` while this process holds the PGlite folder, as a running instance does: the
 * command asks it through the admin socket, and the effect is on the live instance's state.
 * e2e/admin-live.spec.ts does the same against `node server.mjs` with sign-ins in flight.
 */
describe("the admin command line on a live embedded instance", () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "gatehouse-admin-live-"));
  const dataDir = path.join(root, "pglite");
  const env = { ...process.env, DATABASE_URL: `pglite:${dataDir}`, NEXTAUTH_SECRET: randomBytes(32).toString("hex"), LOG_LEVEL: "silent" };
  const admin = (...args: string[]) => runScript("admin", args, env);
  let gate: Gatehouse;
  let channel: AdminChannelServer | null;
  let userId: string;

  beforeAll(async () => {
    const { parseConfig } = await import("@/lib/config/env");
    const { openDatabase } = await import("@/lib/db/client");
    const { createGatehouse } = await import("@/lib/gatehouse");
    const { openAdminChannel } = await import("@/lib/ops/admin-channel");
    const { runAdminRequest } = await import("@/lib/ops/admin-request");
    const { registerAccount } = await import("@/lib/users/accounts");
    const config = parseConfig(env);
    gate = await createGatehouse(config, await openDatabase(config.database.target));
    channel = await openAdminChannel(
      dataDir,
      (request) => runAdminRequest(gate, request, "live"),
      (message) => {
        throw new Error(message);
      },
    );
    const created = await registerAccount(
      gate.prisma,
      { email: "owner@example.com", password: "the right passphrase" },
      gate.hasher,
      Date.now(),
    );
    if (!created.ok) throw new Error("registration failed");
    userId = created.user.id;
  }, 60_000);

  afterAll(async () => {
    await channel?.close();
    await gate?.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("listens on a socket only the instance's user can open: a 0700 folder, a 0600 socket", () => {
    expect(channel?.path).toBe(path.join(`${dataDir}.admin`, "admin.sock"));
    expect(fs.statSync(`${dataDir}.admin`).mode & 0o777).toBe(0o700);
    const socket = fs.statSync(channel!.path);
    expect(socket.isSocket()).toBe(true);
    expect(socket.mode & 0o777).toBe(0o600);
  });

  it("unlocks on the live instance at once, and records the operator named by --as", { timeout: 120_000 }, async () => {
    const key = gate.usernameKey("owner@example.com");
    // Locked under the instance's own policy: a lock longer than its schedule allows reads as a clock
    // step and is over (lib/lockout/lockout-rules.ts).
    const policy = gate.config.lockout;
    for (let i = 0; i < policy.threshold + 1; i++) await gate.lockouts.admitAttempt(key, gate.clock(), policy);
    expect((await gate.lockouts.check(key, gate.clock(), gate.config.lockout)).locked).toBe(true);

    // The folder is held by this process: without the socket the command would exit 1 ("in use").
    const unlocked = await admin("--as", "Ada Operator", "unlock", "Owner@Example.com");
    expect(unlocked, unlocked.out).toMatchObject({ code: 0, out: expect.stringContaining("Unlocked owner@example.com.") });
    expect((await gate.lockouts.check(key, gate.clock(), gate.config.lockout)).locked).toBe(false);

    const session = await gate.prisma.browserSession.create({
      data: {
        id: "l".repeat(22),
        userId,
        browser: "Firefox",
        address: "198.51.100.x",
        createdAt: new Date(),
        lastSeenAt: new Date(),
        expiresAt: new Date(Date.now() + 3_600_000),
      },
    });
    expect((await admin("revoke-sessions", "owner@example.com")).out).toContain("1 browser sessions");
    expect((await gate.prisma.browserSession.findUniqueOrThrow({ where: { id: session.id } })).revokedAt).not.toBeNull();

    expect(await admin("events", "nobody@example.com")).toMatchObject({
      code: 1,
      out: expect.stringContaining("No account has the address"),
    });

    const audit = await admin("audit");
    expect(audit, audit.out).toMatchObject({ code: 0 });
    const lines = audit.out.trim().split("\n");
    // Newest first; the OS user when --as is absent; refusals on record too; no address anywhere.
    expect(lines[0]).toMatch(
      new RegExp(`${os.userInfo().username}\\s+events\\s+${gate.usernameKey("nobody@example.com").slice(0, 16)}…\\s+live\\s+refused$`),
    );
    expect(lines[1]).toMatch(/\s+revoke-sessions\s+\S+…\s+live\s+done$/);
    expect(lines[2]).toMatch(new RegExp(`Ada Operator\\s+unlock\\s+${key.slice(0, 16)}…\\s+live\\s+done$`));
    expect(audit.out).not.toContain("@example.com");
    expect((await admin("audit", "1")).out.trim().split("\n")).toHaveLength(1);
  });

  it("refuses a bad operator name and a request the command line would not send", { timeout: 60_000 }, async () => {
    expect(await admin("--as", "eve\u001b[2J", "lockouts")).toMatchObject({ code: 1, out: expect.stringContaining("--as:") });
    expect(await admin("--as")).toMatchObject({ code: 1, out: expect.stringContaining("--as:") });
    const raw = (line: string) =>
      new Promise<string>((resolve, reject) => {
        let answer = "";
        const socket = net.connect(channel!.path, () => socket.write(line));
        socket.setEncoding("utf8").on("data", (chunk) => (answer += chunk));
        socket.on("end", () => resolve(answer)).on("error", reject);
      });
    expect(JSON.parse(await raw("not json\n"))).toEqual({ ok: false, message: "The request is not one npm run admin sends." });
    expect(JSON.parse(await raw(`${JSON.stringify({ command: "lockouts", args: [], operator: "x", extra: 1 })}\n`))).toMatchObject({
      ok: false,
    });
    expect(JSON.parse(await raw(`${"x".repeat(20_000)}`))).toEqual({ ok: false, message: "The request is too long." });
    expect(JSON.parse(await raw(`${JSON.stringify({ command: "lockouts", args: [], operator: "x" })}\n`))).toMatchObject({ ok: true });
  });

  it("opens the database itself once the instance has stopped, even past a socket a killed one left", { timeout: 120_000 }, async () => {
    await channel!.close();
    channel = null;
    await gate.close();
    // What a kill -9 leaves: a socket file nobody listens on.
    const stale = net.createServer();
    await new Promise<void>((resolve) => stale.listen(path.join(root, "stale.sock"), resolve));
    fs.renameSync(path.join(root, "stale.sock"), path.join(`${dataDir}.admin`, "admin.sock"));
    stale.close();
    const listed = await admin("--as=night-shift", "lockouts");
    expect(listed, listed.out).toMatchObject({ code: 0, out: expect.stringContaining("No username is locked.") });
    expect((await admin("audit", "1")).out.trim()).toMatch(/night-shift\s+lockouts\s+-\s+offline\s+done$/);
  });
});

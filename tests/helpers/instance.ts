import { randomBytes } from "node:crypto";
import os from "node:os";
import path from "node:path";
import { APP_GATEHOUSE, serve } from "@/lib/app";
import { parseConfig, type AppConfig } from "@/lib/config/env";
import { openDatabase, type OpenOptions } from "@/lib/db/client";
import { createGatehouse, type Gatehouse } from "@/lib/gatehouse";
import { peerHeaderFromServer } from "@/lib/http/client-address";
import { forget, remember } from "@/lib/remember";

/** What every test instance starts from: its own secret, fast Argon2id, small proofs of work, no logs. */
const TEST_SETTINGS: Record<string, string> = {
  NEXTAUTH_SECRET: randomBytes(32).toString("hex"),
  ARGON2_PROFILE: "test",
  LOG_LEVEL: "silent",
  ALTCHA_MAX_COUNTER: "50",
  // Mail from tests without an SMTP server of their own goes to a throwaway outbox, not the repository's .data/.
  MAIL_OUTBOX_DIR: path.join(os.tmpdir(), `gatehouse-test-outbox-${randomBytes(4).toString("hex")}`),
};

/** A configuration object for a test: the test settings with `settings` (environment-style names and values) on top. */
export function testConfig(settings: Record<string, string> = {}): AppConfig {
  return parseConfig({ ...TEST_SETTINGS, ...settings });
}

/** A Gatehouse of its own on the database at `databaseUrl` (migrated on open); `gate.close()` closes both. */
export async function testGatehouse(
  databaseUrl: string,
  settings: Record<string, string> = {},
  open: Pick<OpenOptions, "wrapAdapter" | "wrapSql"> = {},
): Promise<Gatehouse> {
  const config = testConfig({ ...settings, DATABASE_URL: databaseUrl });
  const database = await openDatabase(config.database.target, open);
  try {
    // The peer header as the app reads it, once: announcePeerHeader() (tests/helpers/peer.ts) plays server.mjs.
    return await createGatehouse(config, database, { peerHeader: peerHeaderFromServer() });
  } catch (error) {
    await database.close();
    throw error;
  }
}

/**
 * A test Gatehouse that the route handlers and pages use: `gatehouse()` answers with it until
 * `closeServed(gate)`. The routes are the app's own modules, so they reach the instance the way
 * they do in production, by that accessor.
 */
export async function servedGatehouse(
  databaseUrl: string,
  settings: Record<string, string> = {},
  open: Pick<OpenOptions, "wrapAdapter" | "wrapSql"> = {},
): Promise<Gatehouse> {
  return serveAgain(await testGatehouse(databaseUrl, settings, open));
}

/** Makes `gate` (again) the one `gatehouse()` answers with, as servedGatehouse did when it built it. */
export async function serveAgain(gate: Gatehouse): Promise<Gatehouse> {
  forget(APP_GATEHOUSE);
  await remember(APP_GATEHOUSE, async () => serve(gate));
  return gate;
}

/** Closes a served Gatehouse (stores, then database) and takes it out of `gatehouse()`. */
export async function closeServed(gate: Gatehouse | undefined): Promise<void> {
  forget(APP_GATEHOUSE);
  await gate?.close();
}

/** Runs the operator's `npm run admin -- <name> <args>` command in this process, on `gate`: what it prints. */
export async function runAdminCommand(gate: Gatehouse, name: string, ...args: string[]): Promise<string> {
  const { ADMIN_COMMANDS } = await import("@/lib/ops/admin");
  const command = ADMIN_COMMANDS.find((candidate) => candidate.name === name);
  if (!command) throw new Error(`no admin command ${name}`);
  return command.run({ gate, prisma: gate.prisma }, args);
}

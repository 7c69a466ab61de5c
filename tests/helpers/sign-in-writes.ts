import { vi } from "vitest";
import { sessionClaimsOfCookies } from "@/lib/auth/next-auth/cookies";

type Gate = import("@/lib/app").Gatehouse;

/** Every sign-in's last writes are one statement, and its new device is always among them (completeSignIn). */
const SIGN_IN_WRITES = /INSERT INTO "KnownDevice"/;

/**
 * Holds the next sign-in between its password check (which read the account) and the statement
 * that writes its device, its event and, for a browser, its session (lib/db/one-statement.ts):
 * the natural gap between Argon2id and those writes, stretched so that a test can act in it.
 * Only that statement waits; every other goes through as it is.
 */
export function holdSignInWrites(gate: Gate) {
  const run = gate.sql.run.bind(gate.sql);
  let reached!: () => void;
  let release!: () => void;
  const atWrites = new Promise<void>((resolve) => (reached = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  let held = false;
  const spy = vi.spyOn(gate.sql, "run").mockImplementation(async (text, values) => {
    if (!held && SIGN_IN_WRITES.test(text)) {
      held = true;
      reached();
      await released;
    }
    return run(text, values);
  });
  return { reached: atWrites, release, restore: () => spy.mockRestore() };
}

/**
 * The row of the session a cookie (`name=value`) names, and its account's credential generation
 * now: a sign-in held past a revocation must have written its row (a cookie for a row never
 * written would read as dead too, proving nothing) under the generation it read before.
 */
export async function sessionRowOf(gate: Gate, cookiePair: string) {
  const [name, value] = cookiePair.split("=") as [string, string];
  const claims = await sessionClaimsOfCookies(gate.config, { [name]: value });
  const sid = typeof claims?.sid === "string" ? claims.sid : "";
  const row = await gate.prisma.browserSession.findUnique({
    where: { id: sid },
    select: { credentialGeneration: true, user: { select: { credentialGeneration: true } } },
  });
  return row ? { sessionGeneration: row.credentialGeneration, userGeneration: row.user.credentialGeneration } : null;
}

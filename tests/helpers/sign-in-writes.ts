import { vi } from "vitest";

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

import { vi } from "vitest";

import type { SqlValue } from "@/lib/db/sql";

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
  // Guarded writes (lib/db/one-statement.ts) read back one row: whether the account was as checked.
  const rows = gate.sql.rows.bind(gate.sql);
  let reached!: () => void;
  let release!: () => void;
  const atWrites = new Promise<void>((resolve) => (reached = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  let held = false;
  const spy = vi.spyOn(gate.sql, "rows").mockImplementation(async <T>(text: string, values?: readonly SqlValue[]) => {
    if (!held && SIGN_IN_WRITES.test(text)) {
      held = true;
      reached();
      await released;
    }
    return rows<T>(text, values);
  });
  return { reached: atWrites, release, restore: () => spy.mockRestore() };
}

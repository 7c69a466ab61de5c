import { afterAll, beforeAll } from "vitest";
import type { Gatehouse } from "@/lib/app";
import { createAccount } from "./browser";
import type { TestDatabase } from "./databases";
import { closeServed, servedGatehouse } from "./instance";
import { announcePeerHeader } from "./peer";

/**
 * A suite's own served Gatehouse on a fresh database, with `emails` registered under `password`:
 * set up before the suite's tests and closed after them. Read `served.gate` inside a test or hook.
 */
export function servedForSuite(
  makeDatabase: () => Promise<TestDatabase>,
  emails: readonly string[],
  password: string,
  settings: Record<string, string> = {},
): { gate: Gatehouse } {
  const served = {} as { gate: Gatehouse; database?: TestDatabase };
  beforeAll(async () => {
    announcePeerHeader();
    served.database = await makeDatabase();
    served.gate = await servedGatehouse(served.database.url, settings);
    await Promise.all(emails.map((email) => createAccount(served.gate, email, password)));
  });
  afterAll(async () => {
    await closeServed(served.gate);
    await served.database?.dispose();
  });
  return served;
}

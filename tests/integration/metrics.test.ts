import fs from "node:fs";
import type { Gatehouse } from "@/lib/gatehouse";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserSignIn, createAccount } from "../helpers/browser";
import { freshPglite, type TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";

const TOKEN = "m".repeat(40);

/** GET /api/metrics through its route handler: the token, and counts that follow real requests. */
describe("metrics", () => {
  let database: TestDatabase;
  let gate: Gatehouse;

  beforeAll(async () => {
    announcePeerHeader();
    database = await freshPglite();
    // Plain refusals after a failure (a device confirmation's answers are its own suite's).
    gate = await servedGatehouse(database.url, { METRICS_TOKEN: TOKEN, ALTCHA_MAX_COUNTER: "1000", NEW_DEVICE_CONFIRMATION: "off" });
  });

  afterAll(async () => {
    await closeServed(gate);
    await database?.dispose();
  });

  const scrape = async (authorization?: string) =>
    (await import("@/app/api/metrics/route")).GET(
      new Request("http://localhost/api/metrics", {
        headers: { [PEER_HEADER]: freshAddress(), ...(authorization ? { authorization } : {}) },
      }),
    );

  it("answers only the token, and counts outcomes, limits, challenges and Argon2id time", async () => {
    for (const authorization of [undefined, "Bearer wrong", `Basic ${TOKEN}`, `Bearer ${TOKEN}x`]) {
      const refused = await scrape(authorization);
      expect(refused.status, String(authorization)).toBe(401);
      expect(refused.headers.get("www-authenticate")).toContain("Bearer");
    }
    await createAccount(gate, "counted@example.com", "the right passphrase");
    expect((await browserSignIn("counted@example.com", "wrong guess")).status).toBe(401);
    expect((await browserSignIn("counted@example.com", "the right passphrase")).status).toBe(200);

    const res = await scrape(`Bearer ${TOKEN}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/plain");
    const text = await res.text();
    const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? "NaN");
    expect(
      value(/gatehouse_security_outcomes_total\{route="\/api\/auth\/callback\/credentials",outcome="sign_in_failed",policy=""\} (\d+)/),
    ).toBe(1);
    expect(
      value(/gatehouse_security_outcomes_total\{route="\/api\/auth\/callback\/credentials",outcome="sign_in_succeeded",policy=""\} (\d+)/),
    ).toBe(1);
    expect(value(/gatehouse_password_check_seconds_count (\d+)/)).toBe(2);
    expect(value(/gatehouse_limit_decisions_total\{policy="signInAddress",result="allowed"\} (\d+)/)).toBe(2);
    expect(value(/gatehouse_altcha_challenges_total\{level="0"\} (\d+)/)).toBeGreaterThanOrEqual(2);
    expect(value(/gatehouse_hash_budget\{state="concurrency"\} (\d+)/)).toBe(gate.config.passwords.hashConcurrency);
    // Memory (issue 28): the process's RSS and heap, and the embedded database's WebAssembly memory,
    // which is part of that RSS (PGlite starts with 128 MiB and only grows).
    const rssBytes = value(/gatehouse_process_process_resident_memory_bytes (\d+)/);
    const databaseBytes = value(/gatehouse_database_memory_bytes (\d+)/);
    expect(value(/gatehouse_process_nodejs_heap_size_used_bytes (\d+)/)).toBeGreaterThan(0);
    expect(databaseBytes).toBeGreaterThanOrEqual(16 * 1024 * 1024);
    expect(databaseBytes).toBeLessThan(rssBytes);
    // Every statement of these sign-ins was prepared: the code's texts are few (lib/db/sql.ts).
    expect(value(/gatehouse_sql_unprepared_statements_total (\d+)/)).toBe(0);
    // No address or email ever becomes a label.
    expect(text).not.toContain("counted@example.com");
    expect(text).not.toMatch(/198\.51\./);
  });

  it("exports every metric the alert rules in ops/ watch, the memory alert's included", async () => {
    const rules = fs.readFileSync(new URL("../../ops/prometheus-alerts.yml", import.meta.url), "utf8");
    const watched = new Set([...rules.matchAll(/^\s*expr:.*$/gm)].flatMap(([line]) => line.match(/\bgatehouse_[a-z_]+/g) ?? []));
    expect(watched).toContain("gatehouse_process_process_resident_memory_bytes");
    const text = await (await scrape(`Bearer ${TOKEN}`)).text();
    // A sample line, or at least the TYPE line of a labelled family that has none yet.
    for (const name of watched) expect(text, name).toMatch(new RegExp(`^(# TYPE )?${name}[ {]`, "m"));
  });
});

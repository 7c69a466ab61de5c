import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gatehouse } from "@/lib/gatehouse";
import { freshPglite, type TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";

/** Liveness and readiness through their route handlers, before and after the drain begins. */
describe("health and readiness", () => {
  let database: TestDatabase;
  let gate: Gatehouse;

  beforeAll(async () => {
    announcePeerHeader();
    database = await freshPglite();
    gate = await servedGatehouse(database.url);
    await (await import("@/lib/lifecycle/lifecycle")).startGatehouse();
  });

  afterAll(async () => {
    await closeServed(gate);
    await database?.dispose();
  });

  const get = (path: string) => new Request(`http://localhost${path}`, { headers: { [PEER_HEADER]: freshAddress() } });
  const ready = async () => (await import("@/app/api/health/ready/route")).GET(get("/api/health/ready"));
  const live = async () => (await import("@/app/api/health/route")).GET(get("/api/health"));

  it("is ready while serving, and answers 503 (but stays live) once server.mjs starts draining", async () => {
    const before = await ready();
    expect(before.status).toBe(200);
    expect(await before.json()).toMatchObject({ ok: true, draining: false, database: "up" });

    // What server.mjs does at the first SIGTERM.
    const lifecycle = (globalThis as Record<symbol, { draining: boolean } | undefined>)[Symbol.for("gatehouse.lifecycle")];
    expect(lifecycle).toBeDefined();
    lifecycle!.draining = true;
    try {
      const during = await ready();
      expect(during.status).toBe(503);
      expect(await during.json()).toMatchObject({ ok: false, draining: true, database: "up" });
      expect((await live()).status).toBe(200);
    } finally {
      lifecycle!.draining = false;
    }
  });
});

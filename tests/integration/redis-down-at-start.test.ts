import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Gatehouse } from "@/lib/gatehouse";
import { freshPglite, type TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { PEER_HEADER, announcePeerHeader } from "../helpers/peer";
import { freePort } from "../helpers/ports";

describe("a Redis that refuses connections at start", () => {
  let database: TestDatabase;
  let gate: Gatehouse;

  beforeAll(async () => {
    database = await freshPglite();
    announcePeerHeader();
    gate = await servedGatehouse(database.url, { RATE_LIMIT_STORE: "redis", REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
  });

  afterAll(async () => {
    await closeServed(gate);
    await database?.dispose();
  });

  it("starts anyway, reports the store down, and applies each policy's outage rule", async () => {
    const { startGatehouse } = await import("@/lib/lifecycle/lifecycle");
    await startGatehouse();

    const health = await (await import("@/app/api/health/route")).GET(new Request("http://localhost/api/health"));
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({
      ok: true,
      database: "up",
      rateLimitStore: { kind: "redis", state: "down", failClosedPolicies: true },
    });
    // Not ready, though: every sign-in and registration would be refused.
    const ready = await (await import("@/app/api/health/ready/route")).GET(new Request("http://localhost/api/health/ready"));
    expect(ready.status).toBe(503);

    // Registration fails closed: 503 unavailable (the client did nothing wrong) with Retry-After, before anything else runs.
    const { POST } = await import("@/app/api/register/route");
    const refused = await POST(
      new Request("http://localhost/api/register", {
        method: "POST",
        headers: { "content-type": "application/json", [PEER_HEADER]: "198.51.100.9" },
        body: "{}",
      }),
    );
    expect(refused.status).toBe(503);
    expect(refused.headers.get("Retry-After")).toBe("5");
    expect(await refused.json()).toMatchObject({ error: "unavailable" });

    // Challenges only protect capacity: they fail open and are still issued.
    const challenge = await (
      await import("@/app/api/altcha/challenge/route")
    ).GET(new Request("http://localhost/api/altcha/challenge", { headers: { [PEER_HEADER]: "198.51.100.9" } }));
    expect(challenge.status).toBe(200);
  });
});

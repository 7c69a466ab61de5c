import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { browserSignIn, createAccount } from "../helpers/browser";
import type { Gatehouse } from "@/lib/gatehouse";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader, PEER_HEADER } from "../helpers/peer";
import { testKeyPrefix } from "../helpers/redis";

const FLOOD = 200;

/**
 * One client floods GET /api/altcha/challenge (200 at once) through the real route on a shared
 * limiter store. The flood is refused by this instance's own count before it reaches the store,
 * the store's circuits stay closed, and sign-ins from everybody else are served as usual.
 * (With one circuit for every policy and no local count, this flood timed out in the
 * store's per-key queue and opened the circuit that sign-in shares: every sign-in got 429.)
 */
export function storeIsolationSuite(store: "postgres" | "redis", makeDatabase: () => Promise<TestDatabase>, redisUrl?: string) {
  describe(`a challenge flood on the ${store} store`, () => {
    let database: TestDatabase;
    let gate: Gatehouse;

    beforeAll(async () => {
      announcePeerHeader();
      database = await makeDatabase();
      gate = await servedGatehouse(database.url, {
        RATE_LIMIT_STORE: store,
        ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
        RATE_LIMIT_KEY_PREFIX: testKeyPrefix(),
        // Small proofs of work: the sign-ins below solve theirs in the test process.
        ALTCHA_MAX_COUNTER: "1000",
        // A short bandwidth of 10: every admitted consume fits in the PostgreSQL store's per-key
        // queue and its wait, however slow the machine (the default's 30 may not).
        RATE_LIMIT_ALTCHA_CHALLENGE: "30/1m,10/10s",
      });
    });

    afterAll(async () => {
      await closeServed(gate);
      await database?.dispose();
    });

    it("refuses the flood without opening any circuit, and other addresses still sign in", { timeout: 120_000 }, async () => {
      await createAccount(gate, `isolation-${store}@example.com`, "the right passphrase");
      expect(gate.storeHealth()).toEqual({ kind: store, state: "up" });
      const { GET } = await import("@/app/api/altcha/challenge/route");
      const flood = await Promise.all(
        Array.from({ length: FLOOD }, () =>
          GET(new Request("http://localhost/api/altcha/challenge", { headers: { [PEER_HEADER]: "203.0.113.66" } })),
        ),
      );
      const statuses = flood.map((response) => response.status);
      // The policy's short bandwidth (10 per 10 s) admits 10; the rest are plain refusals.
      expect(statuses.filter((status) => status === 200)).toHaveLength(10);
      expect(statuses.filter((status) => status === 429)).toHaveLength(FLOOD - 10);
      expect(gate.storeHealth()).toEqual({ kind: store, state: "up" });

      for (let i = 0; i < 3; i++) {
        const response = await browserSignIn(`isolation-${store}@example.com`, "the right passphrase", { address: `198.18.0.${i + 1}` });
        expect(response.status).toBe(200);
        const body = (await response.json()) as { url: string };
        expect(new URL(body.url, "http://localhost").searchParams.has("error")).toBe(false);
      }
      expect(gate.storeHealth()).toEqual({ kind: store, state: "up" });
    });
  });
}

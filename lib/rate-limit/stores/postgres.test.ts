import { setTimeout as delay } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { postgresReplayStore } from "@/lib/captcha/postgres-replay-store";
import { openDatabase, type Database } from "@/lib/db/client";
import { deleteExpired } from "@/lib/db/expired-rows";
import { resolveDatabaseTarget } from "@/lib/db/target";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import type { TokenBucketState } from "@/lib/rate-limit/algorithms";
import { parseLimitSpec, type Policy } from "@/lib/rate-limit/policies";
import { DECISION_CASES, runDecisionCase } from "@/tests/fixtures/decision-cases";
import { scopedKey, type Decision } from "@/lib/rate-limit/store";
import { createStoreGuard } from "@/lib/rate-limit/store-guard";
import { freshPglite, freshPostgres, postgresUrl, type TestDatabase } from "@/tests/helpers/databases";
import { createPostgresRateLimitStore, DEFAULT_CLEANUP_INTERVAL_MS, type PostgresRateLimitStore } from "./postgres";

// Evaluated at load so that CI=true without TEST_DATABASE_URL fails the file instead of skipping it.
const url = postgresUrl();

// Not UTC, so a comparison that lets the session time zone reinterpret "expiresAt" is caught.
const SESSION_TIME_ZONE = "Asia/Kolkata";

function tokenBucket(name: string, spec: string): Policy {
  return { name, algorithm: { kind: "token-bucket", bandwidths: parseLimitSpec(spec) }, failMode: "closed", description: name };
}

const fivePer15m = tokenBucket("fivePer15m", "5/15m");

/** Counts the statements a store sends, and can run `beforeWrite` ahead of each write. */
function instrumented(prisma: PrismaClient, beforeWrite?: () => Promise<void>) {
  const counts = { queries: 0, writes: 0 };
  const proxy = new Proxy(prisma, {
    get(target, property) {
      if (property === "$queryRaw") {
        return (...args: Parameters<PrismaClient["$queryRaw"]>) => {
          counts.queries += 1;
          return target.$queryRaw(...args);
        };
      }
      if (property === "$executeRaw") {
        return async (...args: Parameters<PrismaClient["$executeRaw"]>) => {
          counts.writes += 1;
          await beforeWrite?.();
          return target.$executeRaw(...args);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { prisma: proxy, counts };
}

function sharedStoreSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`PostgreSQL rate-limit and replay stores on ${label}`, () => {
    let database: TestDatabase;
    // Two clients with their own connections, as two app instances would have.
    let a: Database;
    let b: Database;
    let storeA: PostgresRateLimitStore;
    let storeB: PostgresRateLimitStore;
    const extraStores: PostgresRateLimitStore[] = [];

    function store(prisma: PrismaClient, options?: Parameters<typeof createPostgresRateLimitStore>[1]) {
      const created = createPostgresRateLimitStore(prisma, options);
      extraStores.push(created);
      return created;
    }

    async function serverNowMs(): Promise<number> {
      const [row] = await a.prisma.$queryRaw<
        { nowMs: bigint }[]
      >`SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS "nowMs"`;
      return Number(row!.nowMs);
    }

    function bucket(policy: Policy, key: string) {
      return a.prisma.rateLimitBucket.findUnique({ where: { key: scopedKey(policy.name, key) } });
    }

    async function consumeAll(count: number, consume: (i: number) => Promise<Decision>) {
      const settled = await Promise.allSettled(Array.from({ length: count }, (_, i) => consume(i)));
      const decisions = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
      const errors = settled.flatMap((s) => (s.status === "rejected" ? [s.reason as Error] : []));
      return { admitted: decisions.filter((d) => d.allowed).length, refused: decisions.filter((d) => !d.allowed).length, errors };
    }

    beforeAll(async () => {
      database = await makeDatabase();
      const target = resolveDatabaseTarget(database.url);
      if (target.kind === "postgres") {
        // Set before the pools connect, so every session of both clients gets it.
        const admin = new pg.Client({ connectionString: target.url });
        await admin.connect();
        await admin.query(
          `DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET timezone = %L', current_database(), '${SESSION_TIME_ZONE}'); END $$`,
        );
        await admin.end();
      }
      a = await openDatabase(target);
      b = await openDatabase(target);
      // PGlite has one session, shared by both clients.
      if (target.kind === "pglite") await a.prisma.$executeRawUnsafe(`SET TIME ZONE '${SESSION_TIME_ZONE}'`);
      storeA = createPostgresRateLimitStore(a.prisma);
      storeB = createPostgresRateLimitStore(b.prisma);
    });

    afterAll(async () => {
      for (const s of [storeA, storeB, ...extraStores]) await s?.close();
      await b?.close();
      await a?.close();
      await database?.dispose();
    });

    describe("against the shared decision table", () => {
      for (const [i, decisionCase] of DECISION_CASES.entries()) {
        it(decisionCase.name, async () => {
          // The database's clock swapped for each row's instant; the state still round-trips through the table.
          const atCallerTime = store(a.prisma, { clock: "caller" });
          const policy: Policy = {
            name: `case${i}`,
            algorithm: decisionCase.algorithm,
            failMode: "closed",
            description: decisionCase.name,
          };
          const { actual, expected } = await runDecisionCase(decisionCase, (nowMs, cost) => atCallerTime.consume("k", policy, nowMs, cost));
          expect(actual).toEqual(expected);
        });
      }
    });

    it("runs its sessions in a non-UTC time zone (the premise of the expiry tests)", async () => {
      for (const db of [a, b]) {
        const rows = await db.prisma.$queryRaw<{ tz: string }[]>`SELECT current_setting('TimeZone') AS tz`;
        expect(rows[0]!.tz).toBe(SESSION_TIME_ZONE);
      }
    });

    it("admits 5 per 15 minutes, refuses the 6th for 180 s, and keeps other keys apart", async () => {
      expect(storeA.kind).toBe("postgres");
      const decisions: Decision[] = [];
      for (let i = 0; i < 6; i++) decisions.push(await storeA.consume("alice", fivePer15m, Date.now()));
      expect(decisions[0]).toEqual({ allowed: true, remaining: 4, retryAfterMs: 0, resetAfterMs: 180_000 });
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
      expect(decisions.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
      // A few ms of refill pass between the first and the sixth request.
      expect(decisions[5]!.retryAfterMs).toBeGreaterThan(179_000);
      expect(decisions[5]!.retryAfterMs).toBeLessThanOrEqual(180_000);

      expect(await storeB.consume("bob", fivePer15m, Date.now())).toEqual({
        allowed: true,
        remaining: 4,
        retryAfterMs: 0,
        resetAfterMs: 180_000,
      });
      expect((await storeB.consume("alice", fivePer15m, Date.now())).allowed).toBe(false);
    });

    it("stores the state until the server's now + resetAfterMs, in UTC as Prisma reads it", async () => {
      const beforeMs = await serverNowMs();
      const first = await storeA.consume("expiry", fivePer15m, Date.now());
      const afterMs = await serverNowMs();
      const row = await bucket(fivePer15m, "expiry");
      expect(row?.version).toBe(0);
      const state = row!.state as TokenBucketState;
      expect(state).toMatchObject({ kind: "token-bucket", tokens: [4] });
      expect(state.lastRefillMs).toBeGreaterThanOrEqual(beforeMs);
      expect(state.lastRefillMs).toBeLessThanOrEqual(afterMs);
      // Exact: the stored expiry is the decision's clock reading plus resetAfterMs.
      expect(row!.expiresAt.getTime()).toBe(state.lastRefillMs + first.resetAfterMs);

      const second = await storeB.consume("expiry", fivePer15m, Date.now());
      const renewed = await bucket(fivePer15m, "expiry");
      expect(second.resetAfterMs).toBeGreaterThan(359_000);
      expect(renewed?.version).toBe(1);
      expect(renewed!.expiresAt.getTime()).toBe((renewed!.state as TokenBucketState).lastRefillMs + second.resetAfterMs);
    });

    it("treats an expired row as absent and overwrites it, but honours a live one", async () => {
      for (let i = 0; i < 5; i++) await storeA.consume("carol", fivePer15m, Date.now());
      const key = scopedKey(fivePer15m.name, "carol");

      await a.prisma
        .$executeRaw`UPDATE "RateLimitBucket" SET "expiresAt" = (clock_timestamp() AT TIME ZONE 'UTC') + INTERVAL '1 second' WHERE "key" = ${key}`;
      expect((await storeA.consume("carol", fivePer15m, Date.now())).allowed).toBe(false);

      await a.prisma
        .$executeRaw`UPDATE "RateLimitBucket" SET "expiresAt" = (clock_timestamp() AT TIME ZONE 'UTC') - INTERVAL '1 second' WHERE "key" = ${key}`;
      expect(await storeB.consume("carol", fivePer15m, Date.now())).toEqual({
        allowed: true,
        remaining: 4,
        retryAfterMs: 0,
        resetAfterMs: 180_000,
      });
      const row = await bucket(fivePer15m, "carol");
      // Versions 0–4 were the five admissions; the overwrite went through the version check as 5.
      expect(row?.version).toBe(5);
      expect((row!.state as TokenBucketState).tokens).toEqual([4]);
      expect(row!.expiresAt.getTime()).toBeGreaterThan(Date.now() + 170_000);
    });

    it("sends 2 statements per admission and 1 per refusal, which writes nothing", async () => {
      const { prisma, counts } = instrumented(a.prisma);
      const s = store(prisma);
      const onePerDay = tokenBucket("onePerDay", "1/1d");

      expect((await s.consume("dave", onePerDay, Date.now())).allowed).toBe(true);
      expect(counts).toEqual({ queries: 1, writes: 1 });
      const before = await bucket(onePerDay, "dave");

      expect((await s.consume("dave", onePerDay, Date.now())).allowed).toBe(false);
      expect(counts).toEqual({ queries: 2, writes: 1 });
      expect(await bucket(onePerDay, "dave")).toEqual(before);

      const twoPerDay = tokenBucket("twoPerDay", "2/1d");
      await s.consume("erin", twoPerDay, Date.now());
      await s.consume("erin", twoPerDay, Date.now());
      expect(counts).toEqual({ queries: 4, writes: 3 });
      expect((await bucket(twoPerDay, "erin"))?.version).toBe(1);
    });

    it("re-reads and decides again after losing a version race", async () => {
      let interfere = true;
      const policy = tokenBucket("raced", "10/1d");
      const { prisma, counts } = instrumented(a.prisma, async () => {
        if (!interfere) return;
        interfere = false;
        // Another instance writes between this one's read and its write.
        expect((await storeB.consume("k", policy, Date.now())).remaining).toBe(9);
      });
      const decision = await store(prisma).consume("k", policy, Date.now());
      expect(decision).toMatchObject({ allowed: true, remaining: 8 });
      expect(counts).toEqual({ queries: 2, writes: 2 });
      expect((await bucket(policy, "k"))?.version).toBe(1);
    });

    it("gives up with an error after maxRetries lost races, having written nothing", async () => {
      const policy = tokenBucket("starved", "10/1d");
      const { prisma, counts } = instrumented(a.prisma, async () => void (await storeB.consume("k", policy, Date.now())));
      await expect(store(prisma, { maxRetries: 2 }).consume("k", policy, Date.now())).rejects.toThrow(
        'PostgreSQL rate-limit store: "starved" bucket still contended after 3 attempts',
      );
      expect(counts).toEqual({ queries: 3, writes: 3 });
      const row = await bucket(policy, "k");
      // Only the other instance's three admissions are recorded.
      expect(row?.version).toBe(2);
      expect((row!.state as TokenBucketState).tokens[0]).toBeCloseTo(7, 3);
    });

    it("does not take a re-created row for the one it read, though both are at version 0", async () => {
      const policy = tokenBucket("recreated", "10/1d");
      const key = scopedKey(policy.name, "k");
      await storeB.consume("k", policy, Date.now());
      // The row this instance will read: 2 tokens left, expiring sooner than any row made later.
      await a.prisma
        .$executeRaw`UPDATE "RateLimitBucket" SET "state" = jsonb_set("state", '{tokens,0}', '2'), "expiresAt" = (clock_timestamp() AT TIME ZONE 'UTC') + INTERVAL '1 minute' WHERE "key" = ${key}`;
      let recreate = true;
      const { prisma } = instrumented(a.prisma, async () => {
        if (!recreate) return;
        recreate = false;
        // Between its read and its write, clean-up deletes the row and another instance starts afresh.
        await a.prisma.$executeRaw`DELETE FROM "RateLimitBucket" WHERE "key" = ${key}`;
        expect(await storeB.consume("k", policy, Date.now())).toMatchObject({ remaining: 9 });
      });
      expect(await store(prisma).consume("k", policy, Date.now())).toMatchObject({ allowed: true, remaining: 8 });
      const row = await bucket(policy, "k");
      expect(row?.version).toBe(1);
      expect((row!.state as TokenBucketState).tokens[0]).toBeCloseTo(8, 3);
    });

    it("queues one instance's consumes of a key, so they never race each other", async () => {
      const { prisma, counts } = instrumented(a.prisma);
      const policy = tokenBucket("queued", "5/1d");
      const s = store(prisma);
      const decisions = await Promise.all(Array.from({ length: 10 }, () => s.consume("k", policy, Date.now())));
      expect(decisions.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0, 0, 0, 0, 0]);
      // One read each and one write per admission: not a single lost race.
      expect(counts).toEqual({ queries: 10, writes: 5 });
    });

    it("refuses at once, without a query, what would wait behind maxQueuedPerKey consumes of one key", async () => {
      const { prisma, counts } = instrumented(a.prisma);
      const policy = tokenBucket("hot", "1000/1d");
      const s = store(prisma, { maxQueuedPerKey: 4 });
      const decisions = await Promise.all(Array.from({ length: 20 }, () => s.consume("k", policy, Date.now())));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(4);
      expect(decisions.filter((d) => !d.allowed).map((d) => d.retryAfterMs)).toEqual(Array.from({ length: 16 }, () => 1_000));
      expect(counts.queries).toBe(4);
      // Another key has a queue of its own, and the drained key is served again.
      expect((await s.consume("other", policy, Date.now())).allowed).toBe(true);
      expect((await s.consume("k", policy, Date.now())).allowed).toBe(true);
    });

    it("times each consume's own round trips with guardEach, not its wait behind the key's queue", async () => {
      // Every write takes 30 ms: ten queued consumes take 300 ms or more, each one well under the 150 ms timeout.
      const { prisma } = instrumented(a.prisma, () => delay(30));
      const guard = createStoreGuard({ timeoutMs: 150, breakerFailures: 2, halfOpenAfterMs: 60_000 });
      const policy = tokenBucket("guarded", "10/1d");
      const s = store(prisma, { guardEach: (_policy, work) => guard.execute(work) });
      const decisions = await Promise.all(Array.from({ length: 10 }, () => s.consume("k", policy, Date.now())));
      expect(decisions.map((d) => d.remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
      expect(guard.health()).toBe("up");
    });

    it("never runs two consumes of a key at once, not even after the guard gave up on one, which then stops", async () => {
      // Each write takes 80 ms, the guard gives up after 30: every consume times out.
      let inFlight = 0;
      let mostInFlight = 0;
      const { prisma, counts } = instrumented(a.prisma, async () => {
        inFlight += 1;
        mostInFlight = Math.max(mostInFlight, inFlight);
        await delay(80);
        inFlight -= 1;
      });
      const guard = createStoreGuard({ timeoutMs: 30, breakerFailures: 100, halfOpenAfterMs: 60_000 });
      const policy = tokenBucket("abandoned", "5/1d");
      const s = store(prisma, { guardEach: (_policy, work) => guard.execute((signal) => work(signal)), maxQueueWaitMs: 10_000 });
      const settled = await Promise.allSettled(Array.from({ length: 5 }, () => s.consume("k", policy, Date.now())));
      expect(settled.map((result) => result.status)).toEqual(Array.from({ length: 5 }, () => "rejected"));
      // Wait for the abandoned work to end: one key, one statement at a time, none retried.
      await vi.waitFor(() => expect(counts.writes).toBe(5), { timeout: 5_000 });
      await delay(100);
      expect(mostInFlight).toBe(1);
      expect(counts).toEqual({ queries: 5, writes: 5 });
    });

    it("refuses at once, without a query or the guard, a consume whose turn comes after maxQueueWaitMs", async () => {
      // Each write takes 200 ms: the second turn comes after about 200 ms, the third after about 400.
      const { prisma, counts } = instrumented(a.prisma, () => delay(200));
      const guard = createStoreGuard({ timeoutMs: 5_000, breakerFailures: 1, halfOpenAfterMs: 60_000 });
      const policy = tokenBucket("late", "10/1d");
      const s = store(prisma, { guardEach: (_policy, work) => guard.execute((signal) => work(signal)), maxQueueWaitMs: 300 });
      const decisions = await Promise.all(Array.from({ length: 5 }, () => s.consume("k", policy, Date.now())));
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, false, false, false]);
      expect(decisions.filter((d) => !d.allowed).map((d) => d.retryAfterMs)).toEqual([1_000, 1_000, 1_000]);
      expect(counts.queries).toBe(2);
      expect(guard.health()).toBe("up");
    });

    it("refuses after maxQueueWaitMs a consume waiting behind a statement that never ends", async () => {
      // The first write hangs (a stalled database): its guard gives up, and the statement holds the key.
      let unstall!: () => void;
      const stalled = new Promise<void>((resolve) => (unstall = resolve));
      let writes = 0;
      const { prisma } = instrumented(a.prisma, () => (++writes === 1 ? stalled : Promise.resolve()));
      const guard = createStoreGuard({ timeoutMs: 50, breakerFailures: 100, halfOpenAfterMs: 60_000 });
      const policy = tokenBucket("stalled", "10/1d");
      const s = store(prisma, { guardEach: (_policy, work) => guard.execute((signal) => work(signal)), maxQueueWaitMs: 100 });
      try {
        const first = s.consume("k", policy, Date.now());
        // Checked from now: the guard gives up on it before the second is answered.
        const firstGivenUp = expect(first).rejects.toThrow();
        const startedMs = performance.now();
        const second = await Promise.race([s.consume("k", policy, Date.now()), delay(3_000).then(() => "still waiting" as const)]);
        expect(second).toMatchObject({ allowed: false, retryAfterMs: 1_000 });
        expect(performance.now() - startedMs).toBeLessThan(1_000);
        await firstGivenUp;
      } finally {
        unstall();
      }
      // Once the statement ends, the key's queue moves again.
      await vi.waitFor(async () => expect((await s.consume("k", policy, Date.now())).allowed).toBe(true), { timeout: 5_000 });
    });

    // Two stores are two app instances; ten (five per client) also race inside one connection pool.
    it.each([2, 10])("never admits more than the limit to 200 concurrent requests from %i store instances", async (storeCount) => {
      const stores = Array.from({ length: storeCount }, (_, i) =>
        i < 2 ? [storeA, storeB][i]! : store(i % 2 === 0 ? a.prisma : b.prisma),
      );
      // 20 per day: refill during the test stays far below one token.
      const policy = tokenBucket(`burst${storeCount}`, "20/1d");
      const { admitted, refused, errors } = await consumeAll(200, (i) => stores[i % storeCount]!.consume("k", policy, Date.now()));
      expect(admitted + refused + errors.length).toBe(200);
      expect(admitted).toBeGreaterThan(0);
      expect(admitted).toBeLessThanOrEqual(20);
      for (const error of errors) expect(error.message).toMatch(/still contended/);

      // The row records exactly the admitted requests: no update was lost.
      const row = await bucket(policy, "k");
      expect(row?.version).toBe(admitted - 1);
      expect((row!.state as TokenBucketState).tokens[0]).toBeCloseTo(20 - admitted, 2);

      // What the burst left is still there, and not a token more.
      let later = 0;
      for (let i = 0; i < 25; i++) if ((await stores[i % storeCount]!.consume("k", policy, Date.now())).allowed) later += 1;
      expect(admitted + later).toBe(20);
    });

    it("admits exactly the limit when retries suffice (10 concurrent, limit 5)", async () => {
      // A lost race means another request was admitted, so a request can lose at most 5 times here.
      const policy = tokenBucket("modest", "5/1d");
      const { admitted, refused, errors } = await consumeAll(10, (i) => (i % 2 === 0 ? storeA : storeB).consume("k", policy, Date.now()));
      expect({ admitted, refused, errors: errors.length }).toEqual({ admitted: 5, refused: 5, errors: 0 });
      expect((await bucket(policy, "k"))?.version).toBe(4);
    });

    it("ignores the caller's clock: a host 30 s ahead gets the same decisions", async () => {
      const skewedA = (key: string) => storeA.consume(key, fivePer15m, Date.now() + 30_000);
      const plainB = (key: string) => storeB.consume(key, fivePer15m, Date.now());

      // One key, requests alternating between the skewed and the accurate host.
      const shared: Decision[] = [];
      for (let i = 0; i < 6; i++) shared.push(await (i % 2 === 0 ? skewedA : plainB)("skew-shared"));
      expect(shared.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
      expect(shared.map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
      // With the caller's clock the accurate host would wait out the skewed one's 30 s as well.
      expect(shared[5]!.retryAfterMs).toBeGreaterThan(179_000);
      expect(shared[5]!.retryAfterMs).toBeLessThanOrEqual(180_000);
      const state = (await bucket(fivePer15m, "skew-shared"))!.state as TokenBucketState;
      expect(state.lastRefillMs).toBeLessThanOrEqual(await serverNowMs());

      // Separate keys, one per host: decisions match one for one.
      const onA: Decision[] = [];
      const onB: Decision[] = [];
      for (let i = 0; i < 6; i++) {
        onA.push(await skewedA("skew-a"));
        onB.push(await plainB("skew-b"));
      }
      expect(onA.map((d) => [d.allowed, d.remaining])).toEqual(onB.map((d) => [d.allowed, d.remaining]));
      for (let i = 0; i < 6; i++) expect(Math.abs(onA[i]!.resetAfterMs - onB[i]!.resetAfterMs)).toBeLessThan(1_000);

      // Not even read: a time that would poison the algorithm makes no difference.
      expect(await storeA.consume("skew-nan", fivePer15m, Number.NaN)).toEqual({
        allowed: true,
        remaining: 4,
        retryAfterMs: 0,
        resetAfterMs: 180_000,
      });
    });

    it("uses the sliding window when the policy asks for it", async () => {
      const twoPerMinute: Policy = { ...fivePer15m, name: "window", algorithm: { kind: "sliding-window", limit: 2, windowMs: 60_000 } };
      // Windows are aligned to the clock's minutes: three consumes that straddle one would count in two
      // windows, so they start clear of the next edge.
      const toEdgeMs = 60_000 - (Date.now() % 60_000);
      if (toEdgeMs < 5_000) await new Promise((resolve) => setTimeout(resolve, toEdgeMs + 100));
      const decisions = [];
      for (let i = 0; i < 3; i++) decisions.push(await (i % 2 === 0 ? storeA : storeB).consume("k", twoPerMinute, Date.now()));
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, false]);
      expect((await bucket(twoPerMinute, "k"))?.state).toMatchObject({ kind: "sliding-window", currentCount: 2 });
    });

    it("cleans up its own expired rows and keeps live ones; the replay store cleans its own table", async () => {
      await storeA.cleanupExpired();
      const replays = postgresReplayStore(a.prisma);
      await replays.cleanupExpired();
      await a.prisma.$executeRaw`INSERT INTO "RateLimitBucket" ("key", "state", "expiresAt") VALUES
        ('gc:expired', '{}'::jsonb, (clock_timestamp() AT TIME ZONE 'UTC') - INTERVAL '1 second'),
        ('gc:live', '{}'::jsonb, (clock_timestamp() AT TIME ZONE 'UTC') + INTERVAL '1 minute')`;
      await a.prisma.$executeRaw`INSERT INTO "AltchaReplay" ("id", "expiresAt") VALUES
        ('gc-expired', (clock_timestamp() AT TIME ZONE 'UTC') - INTERVAL '1 second'),
        ('gc-live', (clock_timestamp() AT TIME ZONE 'UTC') + INTERVAL '1 minute')`;
      const bucketsBefore = await a.prisma.rateLimitBucket.count();

      const replayIds = async () =>
        (await a.prisma.altchaReplay.findMany({ where: { id: { startsWith: "gc-" } }, orderBy: { id: "asc" } })).map((r) => r.id);

      expect(await storeB.cleanupExpired()).toBe(1);
      expect(await a.prisma.rateLimitBucket.count()).toBe(bucketsBefore - 1);
      expect(await a.prisma.rateLimitBucket.findUnique({ where: { key: "gc:live" } })).not.toBeNull();
      // The limiter's clean-up leaves the replay store's table alone.
      expect(await replayIds()).toEqual(["gc-expired", "gc-live"]);
      expect(await replays.cleanupExpired()).toBe(1);
      expect(await replayIds()).toEqual(["gc-live"]);
      expect(await storeB.cleanupExpired()).toBe(0);
      expect(await replays.cleanupExpired()).toBe(0);
      await replays.close();
    });

    it("deletes a backlog of expired rows in short statements, and stops a pass after its last statement", async () => {
      await storeA.cleanupExpired();
      await a.prisma.$executeRaw`INSERT INTO "RateLimitBucket" ("key", "state", "expiresAt")
        SELECT 'backlog:' || n, '{}'::jsonb, (clock_timestamp() AT TIME ZONE 'UTC') - n * INTERVAL '1 second'
          FROM generate_series(1, 7) AS n
        UNION ALL SELECT 'backlog:live', '{}'::jsonb, (clock_timestamp() AT TIME ZONE 'UTC') + INTERVAL '1 minute'`;
      const statements: string[] = [];
      const counting = new Proxy(a.prisma, {
        get: (target, property, receiver) =>
          property === "$queryRaw"
            ? (...args: Parameters<PrismaClient["$queryRaw"]>) => {
                statements.push("delete");
                return target.$queryRaw(...args);
              }
            : Reflect.get(target, property, receiver),
      });
      // Two statements of 3 rows: the pass ends with one row left, the oldest gone first.
      expect(await deleteExpired(counting, "RateLimitBucket", { rows: 3, statements: 2 })).toBe(6);
      expect(statements).toHaveLength(2);
      const left = async () =>
        (await a.prisma.rateLimitBucket.findMany({ where: { key: { startsWith: "backlog:" } }, orderBy: { key: "asc" } })).map(
          (r) => r.key,
        );
      expect(await left()).toEqual(["backlog:1", "backlog:live"]);
      // The next pass goes on, and stops at the first short batch.
      statements.length = 0;
      expect(await deleteExpired(counting, "RateLimitBucket", { rows: 3, statements: 2 })).toBe(1);
      expect(statements).toHaveLength(1);
      expect(await left()).toEqual(["backlog:live"]);
    });

    it("cleans up on a timer until closed, passing failures to onCleanupError", async () => {
      const expire = (key: string) =>
        a.prisma
          .$executeRaw`INSERT INTO "RateLimitBucket" ("key", "state", "expiresAt") VALUES (${key}, '{}'::jsonb, (clock_timestamp() AT TIME ZONE 'UTC') - INTERVAL '1 second')`;
      const exists = async (key: string) => (await a.prisma.rateLimitBucket.findUnique({ where: { key } })) !== null;
      vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
      try {
        const onCleanupError = vi.fn();
        const ticking = createPostgresRateLimitStore(a.prisma, { onCleanupError });
        await expire("timer-1");
        vi.advanceTimersByTime(DEFAULT_CLEANUP_INTERVAL_MS - 1);
        await ticking.close();
        expect(await exists("timer-1")).toBe(true);

        const ticking2 = createPostgresRateLimitStore(a.prisma, { onCleanupError });
        vi.advanceTimersByTime(DEFAULT_CLEANUP_INTERVAL_MS);
        // close() waits for the clean-up the tick started.
        await ticking2.close();
        expect(await exists("timer-1")).toBe(false);
        await expire("timer-2");
        vi.advanceTimersByTime(10 * DEFAULT_CLEANUP_INTERVAL_MS);
        expect(await exists("timer-2")).toBe(true);

        const failure = new Error("database gone");
        const broken = createPostgresRateLimitStore({ $queryRaw: () => Promise.reject(failure) } as unknown as PrismaClient, {
          onCleanupError,
          cleanupIntervalMs: 1_000,
        });
        vi.advanceTimersByTime(1_000);
        await broken.close();
        expect(onCleanupError.mock.calls).toEqual([[failure]]);
      } finally {
        vi.useRealTimers();
      }
    });

    describe("replay store", () => {
      const inOneMinute = () => Date.now() + 60_000;

      it("claims an id once, storing its expiry exactly", async () => {
        const replays = postgresReplayStore(a.prisma);
        expect(replays.kind).toBe("postgres");
        const expiresAtMs = inOneMinute();
        expect(await replays.claim("sig-1", expiresAtMs, Date.now())).toBe(true);
        expect(await postgresReplayStore(b.prisma).claim("sig-1", expiresAtMs, Date.now())).toBe(false);
        expect(await replays.claim("sig-2", expiresAtMs, Date.now())).toBe(true);
        expect((await a.prisma.altchaReplay.findUnique({ where: { id: "sig-1" } }))?.expiresAt.getTime()).toBe(expiresAtMs);
      });

      it("refuses an expired challenge without writing", async () => {
        const nowMs = Date.now();
        expect(await postgresReplayStore(a.prisma).claim("sig-late", nowMs, nowMs)).toBe(false);
        expect(await a.prisma.altchaReplay.findUnique({ where: { id: "sig-late" } })).toBeNull();
      });

      it("lets an expired claim be claimed again, but only once", async () => {
        const replays = postgresReplayStore(a.prisma);
        expect(await replays.claim("sig-old", inOneMinute(), Date.now())).toBe(true);
        await a.prisma
          .$executeRaw`UPDATE "AltchaReplay" SET "expiresAt" = (clock_timestamp() AT TIME ZONE 'UTC') - INTERVAL '1 second' WHERE "id" = 'sig-old'`;
        const renewedMs = inOneMinute();
        expect(await replays.claim("sig-old", renewedMs, Date.now())).toBe(true);
        expect((await a.prisma.altchaReplay.findUnique({ where: { id: "sig-old" } }))?.expiresAt.getTime()).toBe(renewedMs);
        expect(await replays.claim("sig-old", renewedMs, Date.now())).toBe(false);
      });

      it("keeps a claim while the caller's clock says it is live, even if the database's says expired", async () => {
        const replays = postgresReplayStore(a.prisma);
        expect(await replays.claim("sig-skew", inOneMinute(), Date.now())).toBe(true);
        await a.prisma
          .$executeRaw`UPDATE "AltchaReplay" SET "expiresAt" = (clock_timestamp() AT TIME ZONE 'UTC') - INTERVAL '1 second' WHERE "id" = 'sig-skew'`;
        expect(await replays.claim("sig-skew", inOneMinute(), (await serverNowMs()) - 10_000)).toBe(false);
      });

      it("deletes its expired rows on a timer of its own until closed", async () => {
        vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
        try {
          const replays = postgresReplayStore(a.prisma, { cleanupIntervalMs: 1_000 });
          await a.prisma
            .$executeRaw`INSERT INTO "AltchaReplay" ("id", "expiresAt") VALUES ('replay-timer', (clock_timestamp() AT TIME ZONE 'UTC') - INTERVAL '1 second')`;
          vi.advanceTimersByTime(1_000);
          // close() waits for the clean-up the tick started.
          await replays.close();
          expect(await a.prisma.altchaReplay.findUnique({ where: { id: "replay-timer" } })).toBeNull();
        } finally {
          vi.useRealTimers();
        }
      });

      it("lets exactly one of 50 parallel claims of one id through", async () => {
        const stores = [postgresReplayStore(a.prisma), postgresReplayStore(b.prisma)];
        const expiresAtMs = inOneMinute();
        const claims = await Promise.all(Array.from({ length: 50 }, (_, i) => stores[i % 2]!.claim("sig-race", expiresAtMs, Date.now())));
        expect(claims.filter(Boolean)).toHaveLength(1);
      });
    });
  });
}

describe("createPostgresRateLimitStore options", () => {
  const noDatabase = {} as PrismaClient;
  it("refuses a maxRetries that is not a whole number >= 0", () => {
    expect(() => createPostgresRateLimitStore(noDatabase, { maxRetries: -1 })).toThrow(/maxRetries/);
    expect(() => createPostgresRateLimitStore(noDatabase, { maxRetries: 1.5 })).toThrow(/maxRetries/);
  });
  it("refuses a cleanupIntervalMs a timer cannot hold", () => {
    expect(() => createPostgresRateLimitStore(noDatabase, { cleanupIntervalMs: 0 })).toThrow(/cleanupIntervalMs/);
    expect(() => createPostgresRateLimitStore(noDatabase, { cleanupIntervalMs: 2 ** 31 })).toThrow(/cleanupIntervalMs/);
  });
});

sharedStoreSuite("embedded PGlite", freshPglite);
describe.skipIf(!url)("PostgreSQL rate-limit and replay stores on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  sharedStoreSuite("PostgreSQL", () => freshPostgres(url!));
});

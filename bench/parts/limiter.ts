import { randomBytes } from "node:crypto";
import Redis from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import type { AlgorithmPolicy } from "@/lib/rate-limit/algorithms";
import { digestKey, RateLimiter } from "@/lib/rate-limit/limiter";
import { policiesFromSpecs, type Policy } from "@/lib/rate-limit/policies";
import type { RateLimitStore } from "@/lib/rate-limit/store";
import { MemoryRateLimitStore } from "@/lib/rate-limit/stores/memory";
import { connectRedis, RedisRateLimitStore } from "@/lib/rate-limit/stores/redis";
import { messageOf } from "@/lib/log/message";
import { PART_TITLES, type Part, type PartContext, type PartReport } from "../lib/part";
import { collectGarbage, fmt, median, seededRandom, sleep, summarize, table } from "../lib/stats";

/**
 * Part 1: what one limiter decision costs, Gatehouse's stores beside rate-limiter-flexible on the
 * same workload: the same keys in the same order, 5 requests per 15 minutes per key. Each key is
 * checked `checksPerKey` times, so most checks are refusals, as under an attack.
 */

const LIMIT = 5;
const PERIOD_MS = 15 * 60_000;

type Checker = { check(key: string): Promise<boolean> };
type Contender = { name: string; create(run: number): Checker };

function policyFor(algorithm: AlgorithmPolicy): Policy {
  return { name: "bench", algorithm, failMode: "closed", description: "bench workload" };
}
const TOKEN_BUCKET = policyFor({ kind: "token-bucket", bandwidths: [{ capacity: LIMIT, periodMs: PERIOD_MS }] });
const SLIDING_WINDOW = policyFor({ kind: "sliding-window", limit: LIMIT, windowMs: PERIOD_MS });

function storeChecker(store: RateLimitStore, policy: Policy): Checker {
  return { check: async (key) => (await store.consume(key, policy, Date.now())).allowed };
}

/** rate-limiter-flexible rejects a refused consume with a RateLimiterRes; anything else is a failure. */
function flexibleChecker(limiter: { consume(key: string): Promise<RateLimiterRes> }): Checker {
  return {
    async check(key) {
      try {
        await limiter.consume(key);
        return true;
      } catch (refusal) {
        if (refusal instanceof RateLimiterRes) return false;
        throw refusal;
      }
    },
  };
}

type Workload = { keys: string[]; rawKeys: string[]; sequence: Uint32Array };

/** `keyCount` keys, each checked `checksPerKey` times, shuffled with a fixed seed. */
function makeWorkload(keyCount: number, checksPerKey: number): Workload {
  const secret = "bench-key-secret-".padEnd(48, "x");
  if (keyCount > 62_500) throw new Error("makeWorkload: at most 62,500 distinct addresses");
  const rawKeys = Array.from({ length: keyCount }, (_, i) => `198.18.${Math.floor(i / 250)}.${(i % 250) + 1}`);
  // The stores see what Gatehouse's limiter hands them: HMAC digests of the key parts.
  const keys = rawKeys.map((raw) => digestKey(secret, [raw]));
  const sequence = new Uint32Array(keyCount * checksPerKey);
  for (let i = 0; i < sequence.length; i++) sequence[i] = i % keyCount;
  const random = seededRandom(20_261_130);
  for (let i = sequence.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [sequence[i], sequence[j]] = [sequence[j]!, sequence[i]!];
  }
  return { keys, rawKeys, sequence };
}

async function timedRun(checker: Checker, keys: readonly string[], sequence: Uint32Array): Promise<{ elapsedMs: number; allowed: number }> {
  let allowed = 0;
  const startedMs = performance.now();
  for (let i = 0; i < sequence.length; i++) if (await checker.check(keys[sequence[i]!]!)) allowed++;
  return { elapsedMs: performance.now() - startedMs, allowed };
}

/** Per-check latencies in ms (performance.now() around each await; its own cost is included). */
async function latencyRun(checker: Checker, keys: readonly string[], sequence: Uint32Array, into: number[]): Promise<void> {
  for (let i = 0; i < sequence.length; i++) {
    const startedMs = performance.now();
    await checker.check(keys[sequence[i]!]!);
    into.push(performance.now() - startedMs);
  }
}

type MemoryRow = { name: string; checksPerSecond: number; p50Ms: number; p99Ms: number; allowed: number[] };

async function memorySection(context: PartContext): Promise<{ markdown: string; headlines: string[] }> {
  const keyCount = context.smoke ? 200 : 10_000;
  const checksPerKey = 20;
  const rounds = context.smoke ? 1 : 5;
  const workload = makeWorkload(keyCount, checksPerKey);
  const checks = workload.sequence.length;
  const secret = "bench-limiter-secret-".padEnd(48, "x");
  const policies = policiesFromSpecs({ signInUsername: `${LIMIT}/15m` });

  // Every run starts from an empty store, so every contender makes the same decisions.
  const contenders: (Contender & { keys: "digest" | "raw" })[] = [
    {
      name: "Gatehouse token bucket (MemoryRateLimitStore)",
      keys: "digest",
      create: () => storeChecker(new MemoryRateLimitStore(), TOKEN_BUCKET),
    },
    {
      name: "Gatehouse sliding window (MemoryRateLimitStore)",
      keys: "digest",
      create: () => storeChecker(new MemoryRateLimitStore(), SLIDING_WINDOW),
    },
    {
      name: "Gatehouse RateLimiter.consume: HMAC key + token bucket, as a route calls it",
      keys: "raw",
      create: () => {
        const limiter = new RateLimiter(new MemoryRateLimitStore(), policies, secret);
        return { check: async (key) => (await limiter.consume("signInUsername", [key])).allowed };
      },
    },
    {
      name: "rate-limiter-flexible RateLimiterMemory",
      keys: "digest",
      create: () => flexibleChecker(new RateLimiterMemory({ points: LIMIT, duration: PERIOD_MS / 1000 })),
    },
  ];
  const keysOf = (contender: { keys: "digest" | "raw" }) => (contender.keys === "digest" ? workload.keys : workload.rawKeys);

  context.say(`memory store: ${fmt.int(keyCount)} keys × ${checksPerKey} checks = ${fmt.int(checks)} checks per run, ${rounds} rounds`);
  // Warm-up: JIT and caches, once per contender, not measured.
  for (const contender of contenders) await timedRun(contender.create(0), keysOf(contender), workload.sequence);

  const throughputs = contenders.map(() => [] as number[]);
  const allowedCounts = contenders.map(() => new Set<number>());
  for (let round = 0; round < rounds; round++) {
    // Rotating the order spreads any drift (thermal, GC, neighbours) across the contenders.
    for (let offset = 0; offset < contenders.length; offset++) {
      const index = (round + offset) % contenders.length;
      const contender = contenders[index]!;
      collectGarbage();
      const { elapsedMs, allowed } = await timedRun(contender.create(round), keysOf(contender), workload.sequence);
      throughputs[index]!.push(checks / (elapsedMs / 1000));
      allowedCounts[index]!.add(allowed);
    }
  }
  const rows: MemoryRow[] = [];
  for (const [index, contender] of contenders.entries()) {
    const latencies: number[] = [];
    collectGarbage();
    await latencyRun(contender.create(rounds), keysOf(contender), workload.sequence, latencies);
    const summary = summarize(latencies);
    rows.push({
      name: contender.name,
      checksPerSecond: median(throughputs[index]!),
      p50Ms: summary.p50,
      p99Ms: summary.p99,
      allowed: [...allowedCounts[index]!],
    });
    context.say(`  ${contender.name}: ${fmt.int(rows.at(-1)!.checksPerSecond)} checks/s`);
  }
  const reference = rows.at(-1)!;
  const markdown = [
    `Workload: ${fmt.int(keyCount)} keys (HMAC digests, as Gatehouse's limiter stores them), each checked ${checksPerKey} times in one seeded random order (${fmt.int(checks)} checks per run), limit ${LIMIT} per 15 minutes: \`RateLimiterMemory({ points: ${LIMIT}, duration: ${PERIOD_MS / 1000} })\` beside Gatehouse policies of ${LIMIT}/15m. Checks run one after another (each awaited). Checks per second: median of ${rounds} runs, in rotating order, each from an empty store. p50/p99: one further run per contender, timing every check.`,
    "",
    table(
      ["Limiter (in-memory)", "Checks/s", "p50 per check", "p99 per check", "Allowed", "Throughput vs RateLimiterMemory"],
      rows.map((row) => [
        row.name,
        fmt.int(row.checksPerSecond),
        fmt.usFromMs(row.p50Ms),
        fmt.usFromMs(row.p99Ms),
        row.allowed.map(fmt.int).join(" / "),
        fmt.ratio(row.checksPerSecond / reference.checksPerSecond),
      ]),
    ),
    "",
    new Set(rows.flatMap((row) => row.allowed)).size === 1
      ? `"Allowed" is the same in every run of every row (${fmt.int(keyCount)} keys × ${LIMIT}): all contenders made the same decisions.`
      : `"Allowed" differs between runs or rows (a run crossed a window boundary, or the algorithms disagree): compare with care.`,
    "",
    `rate-limiter-flexible refuses by rejecting the promise; catching that is part of its cost, as it is for its users. It also arms one timer per key, which Gatehouse's LRU store does not.`,
  ].join("\n");
  const tokenBucket = rows[0]!;
  const slidingWindow = rows[1]!;
  const headlines = [
    `Limiter, in memory: token bucket ${fmt.int(tokenBucket.checksPerSecond)} checks/s (p99 ${fmt.usFromMs(tokenBucket.p99Ms)}), sliding window ${fmt.int(slidingWindow.checksPerSecond)} checks/s; RateLimiterMemory ${fmt.int(reference.checksPerSecond)} checks/s: ${fmt.ratio(tokenBucket.checksPerSecond / reference.checksPerSecond)} and ${fmt.ratio(slidingWindow.checksPerSecond / reference.checksPerSecond)} its throughput`,
  ];
  return { markdown, headlines };
}

// ---------------------------------------------------------------------------------------------
// Redis

/** Sum of commands Redis has executed or rejected, by command, from INFO commandstats. */
async function commandCalls(redis: Redis): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const line of (await redis.info("commandstats")).split(/\r?\n/)) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (!match) continue;
    const rejected = /rejected_calls=(\d+)/.exec(line);
    // INFO itself is how the bench reads the counters: not part of any check.
    if (match[1] !== "info") calls.set(match[1]!, Number(match[2]) + Number(rejected?.[1] ?? 0));
  }
  return calls;
}

function callDelta(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const delta = new Map<string, number>();
  for (const [command, count] of after) {
    const difference = count - (before.get(command) ?? 0);
    if (difference > 0) delta.set(command, difference);
  }
  return delta;
}

/**
 * Round trips a piece of work makes, as Redis saw them: MONITOR reports every command with the
 * connection that sent it, and commands run inside a Lua script with the source "lua". Counted:
 * top-level commands of the connections that touched a key under `prefix` (other clients of a
 * shared Redis are left out). INFO commandstats cannot tell these apart: it also counts each
 * command a script runs.
 */
async function countRoundTrips(url: string, prefix: string, work: () => Promise<void>): Promise<number> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  const marker = new Redis(url, { maxRetriesPerRequest: 1 });
  const monitor = await client.monitor();
  const bySource = new Map<string, { commands: number; ours: boolean }>();
  const markerKey = `${prefix}:monitor-marker`;
  let markerSource: string | undefined;
  let markerSeen: () => void = () => {};
  const markerArrived = new Promise<void>((resolve) => (markerSeen = resolve));
  monitor.on("monitor", (_time: string, args: string[], source: string) => {
    if (source === "lua") return;
    if (args.includes(markerKey)) {
      markerSource = source;
      markerSeen();
      return;
    }
    const entry = bySource.get(source) ?? { commands: 0, ours: false };
    entry.commands++;
    if (args.some((arg) => arg.startsWith(prefix))) entry.ours = true;
    bySource.set(source, entry);
  });
  try {
    await work();
    // MONITOR lags the commands it reports: wait for a marker sent after the work.
    await marker.get(markerKey);
    await Promise.race([markerArrived, new Promise((resolve) => setTimeout(resolve, 5_000))]);
  } finally {
    monitor.disconnect();
    client.disconnect();
    marker.disconnect();
  }
  let total = 0;
  for (const [source, entry] of bySource) if (entry.ours && source !== markerSource) total += entry.commands;
  return total;
}

async function deleteKeys(redis: Redis, pattern: string): Promise<number> {
  let cursor = "0";
  let deleted = 0;
  // SCAN in bounded pages: never KEYS, never FLUSHALL on a shared server.
  for (let page = 0; page < 100_000; page++) {
    const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
    if (keys.length > 0) deleted += await redis.unlink(...keys);
    cursor = next;
    if (cursor === "0") break;
  }
  return deleted;
}

type RedisRow =
  | {
      name: string;
      roundTrips: number;
      commandsPerCheck: number;
      commands: string;
      checksPerSecond: number;
      p50Ms: number;
      p99Ms: number;
      allowed: number;
    }
  | { name: string; skipped: string };

async function redisSection(context: PartContext): Promise<{ markdown: string; headlines: string[] }> {
  const url = process.env.BENCH_REDIS_URL ?? process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
  const host = new URL(url).hostname;
  if (!["127.0.0.1", "localhost", "::1", "[::1]"].includes(host)) {
    return { markdown: `Skipped: ${url} is not on loopback; the bench loads only loopback services.`, headlines: [] };
  }
  const stats = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2_000, retryStrategy: () => null });
  stats.on("error", () => {});
  try {
    await stats.connect();
    await stats.ping();
  } catch (error) {
    stats.disconnect();
    const why = messageOf(error);
    context.say(`redis: skipped (${why})`);
    return { markdown: `Skipped: Redis did not answer at ${url} (${why}).`, headlines: [] };
  }

  const keyCount = context.smoke ? 50 : 1_000;
  const checksPerKey = context.smoke ? 4 : 10;
  const runs = context.smoke ? 1 : 3;
  const workload = makeWorkload(keyCount, checksPerKey);
  const checks = workload.sequence.length;
  const prefix = `gatehouse-bench:${process.pid}-${randomBytes(4).toString("hex")}`;
  const serverVersion = /redis_version:(\S+)/.exec(await stats.info("server"))?.[1] ?? "unknown";
  context.say(`redis ${serverVersion} at ${url}: ${fmt.int(checks)} checks per run, ${runs} runs per contender, key prefix ${prefix}`);

  const flexibleClient = new Redis(url, { maxRetriesPerRequest: 1 });
  const rows: RedisRow[] = [];
  const closers: (() => Promise<unknown>)[] = [() => flexibleClient.quit()];

  type RedisContender = { name: string; checker: (run: number) => Checker; keyPattern: string };
  const contenders: RedisContender[] = [];
  for (const [label, policy] of [
    ["token bucket", TOKEN_BUCKET],
    ["sliding window", SLIDING_WINDOW],
  ] as const) {
    const name = `Gatehouse ${label} (RedisRateLimitStore)`;
    const keyPrefix = `${prefix}:gh-${label.replace(" ", "-")}:`;
    const client = connectRedis(url);
    const store = new RedisRateLimitStore(client, { keyPrefix });
    closers.push(() => client.quit().catch(() => client.disconnect()));
    contenders.push({
      name,
      keyPattern: `${keyPrefix}*`,
      checker: (run) => ({ check: async (key) => (await store.consume(`${run}:${key}`, policy, Date.now())).allowed }),
    });
  }
  const flexiblePrefix = `${prefix}:rlf`;
  const flexible = new RateLimiterRedis({
    storeClient: flexibleClient,
    points: LIMIT,
    duration: PERIOD_MS / 1000,
    keyPrefix: flexiblePrefix,
  });
  contenders.push({
    name: "rate-limiter-flexible RateLimiterRedis (ioredis)",
    keyPattern: `${flexiblePrefix}*`,
    checker: (run) => flexibleChecker({ consume: (key) => flexible.consume(`${run}:${key}`) }),
  });

  try {
    for (const contender of contenders) {
      try {
        // Warm-up off the measured keys: connection set-up and script loading are not per-check
        // costs. A fail-fast client refuses commands until connected, so the first ones may retry.
        const warm = contender.checker(-1);
        for (let i = 0, untilMs = Date.now() + 5_000; i < 20; i++) {
          try {
            await warm.check("warm-up");
          } catch (error) {
            if (Date.now() > untilMs) throw error;
            i--;
            await sleep(50);
          }
        }
        const countedChecks = Math.min(checks, 2_000);
        const counter = contender.checker(runs);
        const roundTrips = await countRoundTrips(url, prefix, async () => {
          for (let i = 0; i < countedChecks; i++) await counter.check(workload.keys[workload.sequence[i]!]!);
        });
        const throughputs: number[] = [];
        const latencies: number[] = [];
        let fewest: { total: number; delta: Map<string, number> } | undefined;
        let allowed = 0;
        for (let run = 0; run < runs; run++) {
          const checker = contender.checker(run);
          const before = await commandCalls(stats);
          const startedMs = performance.now();
          allowed = 0;
          for (let i = 0; i < checks; i++) {
            const key = workload.keys[workload.sequence[i]!]!;
            const checkStartedMs = performance.now();
            if (await checker.check(key)) allowed++;
            latencies.push(performance.now() - checkStartedMs);
          }
          throughputs.push(checks / ((performance.now() - startedMs) / 1000));
          const delta = callDelta(before, await commandCalls(stats));
          const total = [...delta.values()].reduce((sum, count) => sum + count, 0);
          // Other clients of a shared Redis can only add commands, so the fewest seen is the closest.
          if (!fewest || total < fewest.total) fewest = { total, delta };
        }
        const summary = summarize(latencies);
        const commands = [...fewest!.delta.entries()]
          .sort((a, b) => b[1] - a[1])
          .map(([command, count]) => `${command} ${fmt.fixed(count / checks)}`)
          .join(", ");
        rows.push({
          name: contender.name,
          roundTrips: roundTrips / countedChecks,
          commandsPerCheck: fewest!.total / checks,
          commands,
          checksPerSecond: median(throughputs),
          p50Ms: summary.p50,
          p99Ms: summary.p99,
          allowed,
        });
        context.say(
          `  ${contender.name}: ${fmt.fixed(roundTrips / countedChecks)} round trips/check, ${fmt.fixed(fewest!.total / checks)} commands/check, p50 ${fmt.usFromMs(summary.p50)}`,
        );
      } catch (error) {
        rows.push({ name: contender.name, skipped: `failed: ${messageOf(error).split("\n")[0]}` });
        context.say(`  ${contender.name}: failed (${String(error)})`);
      } finally {
        if ("keyPattern" in contender) await deleteKeys(stats, contender.keyPattern);
      }
    }
  } finally {
    for (const close of closers) await close().catch(() => {});
    const left = await deleteKeys(stats, `${prefix}*`);
    stats.disconnect();
    if (left > 0) context.say(`redis: removed ${left} leftover bench keys`);
  }

  const measured = rows.filter((row): row is Extract<RedisRow, { roundTrips: number }> => "roundTrips" in row);
  const reference = measured.find((row) => row.name.startsWith("rate-limiter-flexible"));
  const markdown = [
    `Redis ${serverVersion} on loopback (${url}), ${fmt.int(keyCount)} keys × ${checksPerKey} checks = ${fmt.int(checks)} checks per run, ${runs} timed run(s) per contender, same key order and limit (${LIMIT}/15 min) as above; checks one after another.`,
    "",
    `- Round trips per check: top-level commands Redis received from the contender's connections during ${fmt.int(Math.min(checks, 2_000))} checks, as Redis's MONITOR reports them (commands a Lua script runs are reported with the source "lua" and are not round trips), ÷ checks. A separate, untimed run, since MONITOR slows Redis down.`,
    "- Commands per check: the growth of Redis's `INFO commandstats` (calls + rejected calls, every command but INFO) during a timed run ÷ checks. It includes the commands each script runs, so it measures work inside Redis, not round trips; the lowest of the runs is reported, since other clients of a shared Redis can only add to it.",
    "- p50/p99: every check of every timed run. Keys live under a unique prefix and are deleted afterwards (SCAN + UNLINK).",
    "",
    table(
      [
        "Limiter (Redis)",
        "Round trips/check",
        "Commands/check (incl. inside scripts)",
        "Checks/s (sequential)",
        "p50 per check",
        "p99 per check",
        "Allowed",
        "Checks/s vs RateLimiterRedis",
      ],
      rows.map((row) =>
        "skipped" in row
          ? [row.name, row.skipped, "", "", "", "", "", ""]
          : [
              row.name,
              fmt.fixed(row.roundTrips),
              `${fmt.fixed(row.commandsPerCheck)} (${row.commands})`,
              fmt.int(row.checksPerSecond),
              fmt.usFromMs(row.p50Ms),
              fmt.usFromMs(row.p99Ms),
              fmt.int(row.allowed),
              reference ? fmt.ratio(row.checksPerSecond / reference.checksPerSecond) : "",
            ],
      ),
    ),
  ].join("\n");
  const shortName = (name: string) =>
    name.replace(" (RedisRateLimitStore)", "").replace("rate-limiter-flexible ", "").replace(" (ioredis)", "");
  const skippedOurs = rows.find((row) => "skipped" in row && row.name.startsWith("Gatehouse"));
  const headlines =
    measured.length === 0
      ? []
      : [
          `Limiter, Redis: ${measured.map((row) => `${shortName(row.name)} ${fmt.fixed(row.roundTrips)} round trip/check, p50 ${fmt.usFromMs(row.p50Ms)}, ${fmt.int(row.checksPerSecond)} checks/s`).join("; ")}${skippedOurs && "skipped" in skippedOurs ? ` (Gatehouse's Redis store: ${skippedOurs.skipped})` : ""}`,
        ];
  return { markdown, headlines };
}

export const limiterPart: Part = {
  id: "limiter",
  title: PART_TITLES.limiter,
  async run(context: PartContext): Promise<PartReport> {
    const memory = await memorySection(context);
    const redis = await redisSection(context);
    return {
      markdown: ["### In memory", "", memory.markdown, "", "### Redis", "", redis.markdown].join("\n"),
      headlines: [...memory.headlines, ...redis.headlines],
    };
  },
};

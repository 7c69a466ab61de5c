import os from "node:os";
import { hashPassword, verifyPassword } from "@/lib/password/hash";
import { OWASP_ARGON2ID } from "@/lib/password/hash";
import { PART_TITLES, type Part, type PartContext, type PartReport } from "../lib/part";
import { fmt, summarize, table } from "../lib/stats";

/**
 * Part 5: Argon2id at the configured parameters. One verification's time, then the machine's
 * ceiling: K verifications kept running at once for a fixed time. Every sign-in that reaches
 * Argon2id costs one verification, so the best rate here is the physical limit on sign-ins.
 */

const PASSWORD = "correct horse battery staple";
const GUESS = "Summer2026!guess";

function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

export const argon2Part: Part = {
  id: "argon2",
  title: PART_TITLES.argon2,
  async run(context: PartContext): Promise<PartReport> {
    const params = OWASP_ARGON2ID;
    const cpus = os.availableParallelism();
    const hashSamples = context.smoke ? 1 : 5;
    const verifySamples = context.smoke ? 3 : 40;
    const windowMs = context.smoke ? 300 : 5_000;
    // @node-rs/argon2 runs on libuv's pool (UV_THREADPOOL_SIZE, default 4): more than that just queues.
    const poolSize = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
    const workerCounts = [...new Set([1, cpus, 2 * cpus, poolSize].filter((k) => k <= poolSize))].sort((a, b) => a - b);

    const stored = await hashPassword(PASSWORD, params);
    const hashMs: number[] = [];
    for (let i = 0; i < hashSamples; i++) {
      const startedMs = performance.now();
      await hashPassword(PASSWORD, params);
      hashMs.push(performance.now() - startedMs);
    }
    await verifyPassword(stored, GUESS);
    const verifyMs: number[] = [];
    for (let i = 0; i < verifySamples; i++) {
      const startedMs = performance.now();
      await verifyPassword(stored, GUESS);
      verifyMs.push(performance.now() - startedMs);
    }
    const hash = summarize(hashMs);
    const verify = summarize(verifyMs);
    context.say(`verify p50 ${fmt.ms(verify.p50)}, hash p50 ${fmt.ms(hash.p50)}`);

    const ceilings: { workers: number; perSecond: number; cpuMsEach: number; p50Ms: number; p99Ms: number }[] = [];
    for (const workers of workerCounts) {
      let done = 0;
      const latencies: number[] = [];
      const cpu = process.cpuUsage();
      const startedMs = performance.now();
      const untilMs = startedMs + windowMs;
      await Promise.all(
        Array.from({ length: workers }, async () => {
          while (performance.now() < untilMs) {
            const callMs = performance.now();
            await verifyPassword(stored, GUESS);
            latencies.push(performance.now() - callMs);
            done++;
          }
        }),
      );
      const elapsedMs = performance.now() - startedMs;
      const latency = summarize(latencies);
      ceilings.push({
        workers,
        perSecond: done / (elapsedMs / 1000),
        cpuMsEach: cpuMsSince(cpu) / done,
        p50Ms: latency.p50,
        p99Ms: latency.p99,
      });
      context.say(`  K=${workers}: ${fmt.fixed(ceilings.at(-1)!.perSecond, 1)} verifications/s`);
    }
    const best = ceilings.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
    const atBudget = ceilings.find((ceiling) => ceiling.workers === cpus);

    const markdown = [
      `Argon2id m=${params.memoryCostKiB} KiB, t=${params.timeCost}, p=${params.parallelism} (OWASP's minimum, the production profile) through \`lib/password/hash.ts\` (@node-rs/argon2, on libuv's thread pool of ${poolSize}). Verifications of a wrong guess against a stored hash, as an attack causes them; a right password costs the same.`,
      "",
      table(
        ["One at a time", "Samples", "p50", "p99", "Mean"],
        [
          ["Verify", fmt.int(verify.count), fmt.ms(verify.p50), fmt.ms(verify.p99), fmt.ms(verify.mean)],
          ["Hash (registration, rehash)", fmt.int(hash.count), fmt.ms(hash.p50), fmt.ms(hash.p99), fmt.ms(hash.mean)],
        ],
      ),
      "",
      `Ceiling: K verifications kept in flight for ${fmt.fixed(windowMs / 1000, 1)} s each, on ${cpus} CPUs. The default hash budget runs K = HASH_CONCURRENCY = ${cpus} (the CPU count).`,
      "",
      table(
        ["K (concurrent)", "Verifications/s", "CPU per verification", "Latency p50 / p99"],
        ceilings.map((ceiling) => [
          `${ceiling.workers}${ceiling.workers === cpus ? " (default budget)" : ""}`,
          fmt.fixed(ceiling.perSecond, 1),
          fmt.ms(ceiling.cpuMsEach),
          `${fmt.ms(ceiling.p50Ms)} / ${fmt.ms(ceiling.p99Ms)}`,
        ]),
      ),
      "",
      `Physical limit on this machine: about **${fmt.int(best.perSecond)} sign-ins per second** reach a verdict, whatever the traffic (K = ${best.workers}); every sign-in past the limiter, ALTCHA and lockout takes one verification, plus the HTTP and database work around it.`,
    ].join("\n");
    return {
      markdown,
      headlines: [
        `Argon2id (m=19456 KiB, t=2, p=1): verify p50 ${fmt.ms(verify.p50)} (p99 ${fmt.ms(verify.p99)}); ceiling ${fmt.fixed(best.perSecond, 1)} verifications/s with K=${best.workers}${atBudget && atBudget !== best ? ` (${fmt.fixed(atBudget.perSecond, 1)}/s at the default budget K=${cpus})` : best.workers === cpus ? " (the default budget)" : ""}: the physical limit on sign-ins per second`,
      ],
    };
  },
};

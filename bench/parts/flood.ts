import os from "node:os";
import autocannon, { type Instance, type Options, type RawRequest, type Result } from "autocannon";
import { defaultLimitSpecs, parseLimitSpec } from "@/lib/rate-limit/policies";
import { getCsrf, SIGN_IN_PATH, signInBody, signInHeaders, solvedPayload } from "../lib/http";
import { PART_TITLES, type Part, type PartContext, type PartReport } from "../lib/part";
import type { BenchServer } from "../lib/server";
import { fmt, sleep, table } from "../lib/stats";

/**
 * Part 2: one address floods the sign-in endpoint with wrong passwords (autocannon, bounded in
 * time and requests), against a bare static file served by the same server. The attacker is
 * given its best case: a fresh username per request (so only the per-address limit applies)
 * and a pool of ALTCHA solutions made elsewhere, so the limiter, not the captcha, has to stop it.
 */

const ATTACKER_ADDRESS = "203.0.113.7";
const CONNECTIONS = 10;
const REQUEST_CAP = 500_000;

type Phase = { result: Result; statuses: Map<number, number>; cpuMs: number; seconds: number };

async function cannon(options: Options, stopWhen?: (statuses: Map<number, number>) => boolean): Promise<Omit<Phase, "cpuMs">> {
  const statuses = new Map<number, number>();
  const instance: Instance = autocannon({ connections: CONNECTIONS, timeout: 10, maxOverallRequests: REQUEST_CAP, ...options });
  instance.on("response", (_client: unknown, statusCode: number) => {
    statuses.set(statusCode, (statuses.get(statusCode) ?? 0) + 1);
    if (stopWhen?.(statuses)) instance.stop();
  });
  const result = await instance;
  return { result, statuses, seconds: result.duration };
}

async function measured(server: BenchServer, run: () => Promise<Omit<Phase, "cpuMs">>): Promise<Phase> {
  const cpuBeforeMs = server.cpuMs();
  const phase = await run();
  return { ...phase, cpuMs: server.cpuMs() - cpuBeforeMs };
}

/** Waits until Argon2id work already admitted has finished: no new verification for `quietMs`. */
async function settle(server: BenchServer, quietMs: number, limitMs: number): Promise<void> {
  const untilMs = Date.now() + limitMs;
  let last = -1;
  while (Date.now() < untilMs) {
    const now = server.eventCount("sign_in_failed") + server.eventCount("sign_in_succeeded");
    if (now === last) return;
    last = now;
    await sleep(quietMs);
  }
}

const count = (statuses: Map<number, number>, ...codes: number[]) => codes.reduce((sum, code) => sum + (statuses.get(code) ?? 0), 0);
const total = (statuses: Map<number, number>) => [...statuses.values()].reduce((sum, value) => sum + value, 0);
const describe = (statuses: Map<number, number>) =>
  [...statuses.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([code, n]) => `${code}: ${fmt.int(n)}`)
    .join(", ");

export const floodPart: Part = {
  id: "flood",
  title: PART_TITLES.flood,
  async run(context: PartContext): Promise<PartReport> {
    const floodSeconds = context.smoke ? 1 : 15;
    const poolSize = context.smoke ? 6 : 40;
    const [addressBandwidth] = parseLimitSpec(defaultLimitSpecs.signInAddress);
    return context.withServer(async (server) => {
      const csrf = await getCsrf(server.baseUrl);
      // Solutions fetched from other addresses: challenges are not bound to who asked for them.
      const pool: string[] = [];
      for (let i = 0; i < poolSize; i++) pool.push(await solvedPayload(server.baseUrl, `198.51.100.${i + 1}`));
      let sent = 0;
      const signInRequest = {
        method: "POST",
        path: SIGN_IN_PATH,
        headers: signInHeaders(ATTACKER_ADDRESS, csrf),
        setupRequest: (request: RawRequest): RawRequest => {
          const n = sent++;
          // Past the pool the payloads repeat (replays); by then the address limit answers first.
          const body = signInBody({ email: `spray-${n}@example.com`, password: "wrong-password-123", csrfToken: csrf.token, altcha: pool[n % pool.length]! });
          return { ...request, body };
        },
      };
      const argon2Before = server.eventCount("sign_in_failed");
      const floodStartedMs = Date.now();

      // Opening burst: the allowance is spent and admitted attempts queue for Argon2id.
      context.say(`flood: opening burst from ${ATTACKER_ADDRESS}, ${CONNECTIONS} connections`);
      const opening = await cannon({ url: server.baseUrl, duration: context.smoke ? 1 : 5, requests: [signInRequest] }, (statuses) => count(statuses, 429) >= 200);
      const quietMs = context.smoke ? 300 : 1_000;
      await settle(server, quietMs, 30_000);
      // Steady flood: from here on every answer is a refusal; this is what its CPU cost is measured on.
      context.say(`flood: steady flood for ${floodSeconds} s`);
      const steady = await measured(server, () => cannon({ url: server.baseUrl, duration: floodSeconds, requests: [signInRequest] }));
      await settle(server, quietMs, 30_000);
      const floodElapsedMs = Date.now() - floodStartedMs;
      const reachedArgon2 = server.eventCount("sign_in_failed") - argon2Before;
      // The per-address bucket: its capacity, plus whatever refilled while the flood lasted.
      const allowance = addressBandwidth!.capacity + Math.ceil((floodElapsedMs * addressBandwidth!.capacity) / addressBandwidth!.periodMs);

      context.say(`bare route: GET /robots.txt for ${floodSeconds} s`);
      const bare = await measured(server, () => cannon({ url: `${server.baseUrl}/robots.txt`, duration: floodSeconds }));

      const steadyRefused = count(steady.statuses, 429, 400, 503);
      const steadyCompleted = total(steady.statuses);
      const bareCompleted = total(bare.statuses);
      const refusedPerSecond = steadyRefused / steady.seconds;
      const barePerSecond = count(bare.statuses, 200) / bare.seconds;
      const cpuPerRefusedMs = steady.cpuMs / steadyCompleted;
      const cpuPerBareMs = bare.cpuMs / bareCompleted;
      const all = new Map(opening.statuses);
      for (const [code, n] of steady.statuses) all.set(code, (all.get(code) ?? 0) + n);

      const markdown = [
        `Server: \`node server.mjs\` (production build, fresh PGlite database, default limits: sign-in ${defaultLimitSpecs.signInAddress} per address and ${defaultLimitSpecs.signInUsername} per username + address, lockout after 5, hash budget = CPU count running + 8 waiting, Argon2id m=19456 KiB t=2 p=1; \`ALTCHA_MAX_COUNTER=1000\` and \`ALTCHA_EXPIRES_SECONDS=3600\` so the bench can make solutions cheaply). \`server.mjs\` rather than the issue's \`next start\`: only it stamps the socket address the limiter keys on, so under \`next start\` there is no per-address limit to measure. The load generator is autocannon (${CONNECTIONS} connections, in the bench process, on the same ${os.availableParallelism()}-core machine as the server), every request from ${ATTACKER_ADDRESS} through the trusted-proxy header.`,
        "",
        `The attacker's best case: a new username on every request (only the per-address limit applies) and ${poolSize} valid ALTCHA solutions made in advance. First an opening burst (${fmt.fixed(opening.seconds, 1)} s, stopped once 200 requests were refused), then a steady flood of ${floodSeconds} s. Server CPU is read from /proc (user + system of the server process tree) before and after each measured phase.`,
        "",
        table(
          ["Over the whole flood", "Value"],
          [
            ["Requests answered (opening burst + steady flood)", `${fmt.int(total(all))} (${describe(all)})`],
            ["Reached Argon2id (server log: `sign_in_failed`)", `**${fmt.int(reachedArgon2)}**`],
            [`Policy allows (per-address bucket ${defaultLimitSpecs.signInAddress}: capacity + refill over ${fmt.fixed(floodElapsedMs / 1000, 1)} s)`, `${fmt.int(allowance)}: ${reachedArgon2 <= allowance ? "within" : "**EXCEEDED**"}`],
          ],
        ),
        "",
        table(
          ["Steady phase", "Requests", "Answers/s", "Server CPU", "Server CPU per request", "Latency p50 / p99"],
          [
            [`Refused sign-ins (POST ${SIGN_IN_PATH}; ${describe(steady.statuses)})`, fmt.int(steadyCompleted), fmt.int(refusedPerSecond), fmt.ms(steady.cpuMs), fmt.usFromMs(cpuPerRefusedMs), `${steady.result.latency.p50} ms / ${steady.result.latency.p99} ms`],
            [`Bare route (GET /robots.txt, a static file; ${describe(bare.statuses)})`, fmt.int(bareCompleted), fmt.int(barePerSecond), fmt.ms(bare.cpuMs), fmt.usFromMs(cpuPerBareMs), `${bare.result.latency.p50} ms / ${bare.result.latency.p99} ms`],
            ["Refused sign-in ÷ bare route", "", fmt.ratio(refusedPerSecond / barePerSecond), "", fmt.ratio(cpuPerRefusedMs / cpuPerBareMs), ""],
          ],
        ),
        "",
        `Errors/timeouts reported by autocannon: steady ${steady.result.errors}/${steady.result.timeouts}, bare ${bare.result.errors}/${bare.result.timeouts}.`,
      ].join("\n");
      return {
        markdown,
        headlines: [
          `Flood from one address: ${fmt.int(total(all))} wrong-password sign-ins, ${fmt.int(reachedArgon2)} reached Argon2id (policy allows ${fmt.int(allowance)}); refused at ${fmt.int(refusedPerSecond)}/s for ${fmt.usFromMs(cpuPerRefusedMs)} of server CPU each, ${fmt.ratio(cpuPerRefusedMs / cpuPerBareMs)} the CPU of a static file (${fmt.usFromMs(cpuPerBareMs)}, ${fmt.int(barePerSecond)}/s)`,
        ],
      };
    });
  },
};

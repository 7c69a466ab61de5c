/**
 * Record 43's owner figure (issue 61): what the owner's sign-in costs on each build, in alternating
 * rounds (the order flipped each round). Each sign-in is what the page does: a challenge, its
 * solution, the post, from a new address, presenting the device cookie of the last success; per
 * round and build, PER sign-ins, the server's CPU (user + system from /proc, the process and its
 * children) and the median time of the post.
 *   npx tsx bench/experiments/owner-sign-in.ts label=DIR [label=DIR ...]      (ROUNDS, default 4)
 */
import path from "node:path";
import { buildArgs } from "../lib/builds";
import { closeConnections, getCsrf, register, signIn, solvedPayload, type Csrf } from "../lib/http";
import { DRILL_SETTINGS, processTreeCpuMs, startServer, type BenchServer } from "../lib/server";
import { fmt, median } from "../lib/stats";

const ROUNDS = Number(process.env.ROUNDS ?? 4);
const PER = 12;
const WARM = 3;
const PASSWORD = "correct-horse-battery-9";

type Contender = {
  label: string;
  server: BenchServer;
  csrf: Csrf;
  email: string;
  deviceToken?: string;
  cpuMs: number[];
  postMs: number[];
  outcomes: Map<string, number>;
};

let addresses = 0;
/** A new address each time, so no per-address allowance refuses the owner. */
function nextAddress(): string {
  addresses++;
  return `10.${8 + (addresses >> 16)}.${(addresses >> 8) & 255}.${addresses & 255}`;
}

async function signInOnce(contender: Contender): Promise<number> {
  const address = nextAddress();
  const altcha = await solvedPayload(contender.server.baseUrl, address, contender.deviceToken);
  const outcome = await signIn(contender.server.baseUrl, {
    address,
    email: contender.email,
    password: PASSWORD,
    altcha,
    csrf: contender.csrf,
    deviceToken: contender.deviceToken,
  });
  if (outcome.deviceToken) contender.deviceToken = outcome.deviceToken;
  contender.outcomes.set(outcome.kind, (contender.outcomes.get(outcome.kind) ?? 0) + 1);
  return outcome.ms;
}

async function main() {
  const contenders: Contender[] = [];
  for (const { label, root, settings } of buildArgs(process.argv.slice(2))) {
    // The known-device lane's hourly allowance is raised: this drill signs in 3 + ROUNDS × 12 times.
    const server = await startServer(
      path.resolve(root),
      { ...DRILL_SETTINGS, RATE_LIMIT_KNOWN_DEVICE_LANE: "1000/1h", ...settings },
      () => {},
    );
    const email = `owner-${label}@example.com`;
    const registered = await register(server.baseUrl, nextAddress(), email, PASSWORD);
    if (registered.status >= 300) throw new Error(`${label}: registration answered ${registered.status}`);
    contenders.push({ label, server, csrf: await getCsrf(server.baseUrl), email, cpuMs: [], postMs: [], outcomes: new Map() });
  }
  // Warm each server, and make the owner's browser a known device.
  for (const contender of contenders) for (let i = 0; i < WARM; i++) await signInOnce(contender);
  for (let round = 0; round < ROUNDS; round++) {
    for (const contender of round % 2 === 0 ? contenders : [...contenders].reverse()) {
      const before = processTreeCpuMs(contender.server.pid);
      const times: number[] = [];
      for (let i = 0; i < PER; i++) times.push(await signInOnce(contender));
      contender.cpuMs.push((processTreeCpuMs(contender.server.pid) - before) / PER);
      contender.postMs.push(median(times));
      console.log(`round ${round + 1} ${contender.label}: ${fmt.ms(contender.cpuMs.at(-1)!)} CPU a sign-in, post ${fmt.ms(median(times))}`);
    }
  }
  const range = (values: number[]) => `${fmt.ms(Math.min(...values))}–${fmt.ms(Math.max(...values))}`;
  for (const contender of contenders)
    console.log(
      `SUMMARY ${contender.label}: CPU a sign-in ${range(contender.cpuMs)} (median ${fmt.ms(median(contender.cpuMs))}), post ${range(contender.postMs)}; ${JSON.stringify(Object.fromEntries(contender.outcomes))}`,
    );
  for (const contender of contenders) await contender.server.stop();
  closeConnections();
}
main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

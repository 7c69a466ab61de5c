/**
 * CPU profiles of builds under the same floods (issue 61): for each checkout given, a fresh server
 * (`node --import bench/lib/profile-hook.mjs server.mjs`), a repeated refused sign-in from one
 * address (REFUSALS requests) and sign-ins from never-seen addresses (DISTINCT requests), each
 * profiled alone into OUT/<label>-refusal.cpuprofile and OUT/<label>-distinct.cpuprofile.
 *   npx tsx bench/profile-drive.ts OUT label=DIR [label=DIR ...]   (label=DIR@NAME=VALUE: bench/lib/builds.ts)
 * Then: node bench/lib/profile-summary.mjs OUT/a-refusal.cpuprofile OUT/b-refusal.cpuprofile
 */
import fs from "node:fs";
import path from "node:path";
import { buildArgs } from "./lib/builds";
import { answered, FloodClient, type CannonLoad } from "./lib/cannon";
import { getCsrf, signInBody, signInHeaders, SIGN_IN_PATH } from "./lib/http";
import { DRILL_SETTINGS, startServer } from "./lib/server";
import { sleep } from "./lib/stats";

const REFUSALS = Number(process.env.REFUSALS ?? 30_000);
const DISTINCT = Number(process.env.DISTINCT ?? 4_000);
const [out, ...builds] = process.argv.slice(2);
if (!out || builds.length === 0) throw new Error("usage: npx tsx bench/profile-drive.ts OUT label=DIR [label=DIR ...]");
fs.mkdirSync(out, { recursive: true });
process.env.BENCH_SERVER_NODE_FLAGS = `--import=${path.join(__dirname, "lib", "profile-hook.mjs")}`;
const say = (line: string) => console.log(line);

async function main() {
  const cannon = new FloodClient(path.resolve(__dirname, ".."));
  for (const { label, root, settings } of buildArgs(builds)) {
    const profile = path.join(out!, `${label}.tmp.cpuprofile`);
    const server = await startServer(path.resolve(root), { ...DRILL_SETTINGS, ...settings, BENCH_PROFILE_OUT: profile }, say);
    try {
      const csrf = await getCsrf(server.baseUrl);
      const body = signInBody({ email: "nobody@example.com", password: "wrong-password-123", altcha: "", csrfToken: csrf.token });
      const distinctHeaders = signInHeaders("10.0.0.1", csrf);
      delete distinctHeaders["x-forwarded-for"];
      const refusal: CannonLoad = { kind: "fixed", method: "POST", path: SIGN_IN_PATH, headers: signInHeaders("203.0.113.9", csrf), body };
      const distinct: CannonLoad = { kind: "distinct", method: "POST", path: SIGN_IN_PATH, headers: distinctHeaders, body };
      const cpu = () => server.cpuMs();
      await cannon.run({ url: server.baseUrl, connections: 16, durationSeconds: 2, maxRequests: 5_000, load: refusal }, cpu);
      for (const [name, load, count] of [
        ["refusal", refusal, REFUSALS],
        ["distinct", distinct, DISTINCT],
      ] as const) {
        process.kill(server.pid, "SIGUSR2");
        await sleep(300);
        const flood = await cannon.run({ url: server.baseUrl, connections: 16, durationSeconds: 120, maxRequests: count, load }, cpu);
        process.kill(server.pid, "SIGUSR2");
        await sleep(2_000);
        fs.renameSync(profile, path.join(out!, `${label}-${name}.cpuprofile`));
        say(
          `${label} ${name}: ${answered(flood)} answers ${JSON.stringify(flood.statuses)}, ${((flood.cpuMs * 1000) / answered(flood)).toFixed(0)} µs CPU each`,
        );
      }
    } finally {
      await server.stop();
    }
  }
  cannon.close();
}
main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

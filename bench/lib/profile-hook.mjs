// @ts-check
// A CPU profile of a window of a server's life, not of its start: preloaded with
// `node --import ./bench/lib/profile-hook.mjs server.mjs` (BENCH_SERVER_NODE_FLAGS), the first
// SIGUSR2 starts V8's profiler and the next writes the profile to BENCH_PROFILE_OUT.
import fs from "node:fs";
import { Session } from "node:inspector";

const out = process.env.BENCH_PROFILE_OUT;
if (out) {
  const session = new Session();
  session.connect();
  let profiling = false;
  process.on("SIGUSR2", () => {
    if (!profiling) {
      profiling = true;
      session.post("Profiler.enable", () => session.post("Profiler.start"));
      return;
    }
    profiling = false;
    session.post("Profiler.stop", (error, result) => {
      if (error) console.error(`profile: ${error.message}`);
      else fs.writeFileSync(out, JSON.stringify(result.profile));
    });
  });
}

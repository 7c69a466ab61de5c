/**
 * Issue 61's A/B on a busy machine: part 15's figures for several builds at once, each server
 * started once (starts take minutes under load), then rounds that alternate every contender (the
 * order flipped each round): a repeated refused sign-in (one address, its allowance spent by 300
 * unmeasured answers), sign-ins from never-seen addresses (new ones each round), and idle RSS.
 *   npx tsx bench/ab-cost.ts label=DIR [label=DIR ...]     (the first build's 429 is the floor's)
 * A build may name settings of its own after the directory: label=DIR@LOG_LEVEL=warn@NAME=VALUE.
 * ROUNDS (default 3) and WARMUP (never-seen requests before the rounds, default 2,000) set its size.
 */
import os from "node:os";
import fs from "node:fs";
import path from "node:path";
import readline from "node:readline";
import { spawn } from "node:child_process";
import { buildArgs, type BuildArg } from "./lib/builds";
import { answered, FloodClient, type CannonLoad } from "./lib/cannon";
import { getCsrf, request, signInBody, signInHeaders, SIGN_IN_PATH } from "./lib/http";
import { DRILL_SETTINGS, freePort, killOnExit, processTreeCpuMs, startServer } from "./lib/server";
import { fmt, median } from "./lib/stats";
import { startPeer } from "./peer/start";

const ROUNDS = Number(process.env.ROUNDS ?? 3);
// Never-seen requests sent to each contender before the rounds, so that they measure warm servers
// (a short flood on a fresh one mostly times its first, unoptimised requests); 0 for none.
const WARMUP = Number(process.env.WARMUP ?? 2000);
const REFUSAL_SECONDS = 4;
const DISTINCT_SECONDS = 6;
type Target = {
  label: string;
  url: string;
  pid: number;
  refusal: CannonLoad;
  distinct: (first: number) => CannonLoad;
  rss: number;
  stop(): Promise<void> | void;
};
const say = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)} load ${os.loadavg()[0]!.toFixed(1)}] ${line}`);
const rssOf = (pid: number) => Number(/^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) * 1024;

async function gatehouse({ label, root, settings: own }: BuildArg): Promise<Target> {
  const settings = { ...DRILL_SETTINGS, ...own };
  say(`${label}: ${root}${Object.keys(own).length > 0 ? ` with ${JSON.stringify(own)}` : ""}`);
  const server = await startServer(path.resolve(root), settings, say).catch(() => startServer(path.resolve(root), settings, say));
  const csrf = await getCsrf(server.baseUrl);
  const body = signInBody({ email: "nobody@example.com", password: "wrong-password-123", altcha: "", csrfToken: csrf.token });
  const headers = signInHeaders("10.0.0.1", csrf);
  delete headers["x-forwarded-for"];
  for (let i = 0; i < 20; i++) await request(server.baseUrl, { method: "GET", path: "/sign-in" });
  return {
    label,
    url: server.baseUrl,
    pid: server.pid,
    refusal: { kind: "fixed", method: "POST", path: SIGN_IN_PATH, headers: signInHeaders("203.0.113.9", csrf), body },
    distinct: (first) => ({ kind: "distinct", method: "POST", path: SIGN_IN_PATH, headers, body, firstAddress: first }),
    rss: rssOf(server.pid),
    stop: () => server.stop(),
  };
}

async function main() {
  const cannon = new FloodClient(path.resolve(__dirname, ".."));
  const targets: Target[] = [];
  for (const build of buildArgs(process.argv.slice(2))) targets.push(await gatehouse(build));
  const peer = await startPeer(path.resolve(__dirname, ".."), say, "argon2id");
  for (let i = 0; i < 20; i++) await request(peer.baseUrl, { method: "GET", path: "/api/auth/get-session" });
  const json = { "content-type": "application/json", origin: peer.baseUrl };
  targets.push({
    label: "better-auth",
    url: peer.baseUrl,
    pid: peer.pid,
    refusal: {
      kind: "fixed",
      method: "POST",
      path: "/api/auth/sign-in/email",
      headers: { ...json, "x-forwarded-for": "203.0.113.9" },
      body: JSON.stringify({ email: "nobody@example.com", password: "wrong-password-123" }),
    },
    distinct: (first) => ({
      kind: "distinct",
      method: "POST",
      path: "/api/auth/sign-in/email",
      headers: json,
      body: JSON.stringify({ email: "nobody" }),
      firstAddress: first,
    }),
    rss: rssOf(peer.pid),
    stop: () => peer.stop(),
  });
  // Every contender's allowance spent by count; then the floor, sent the first build's refusal.
  for (const target of targets)
    await cannon.run({ url: target.url, connections: 16, durationSeconds: 90, maxRequests: 300, load: target.refusal }, () => 0);
  const first = targets[0]!;
  const sample = await request(first.url, {
    method: "POST",
    path: SIGN_IN_PATH,
    headers: (first.refusal as { headers: Record<string, string> }).headers,
    body: (first.refusal as { body: string }).body,
  });
  if (sample.status !== 429) throw new Error(`no 429 to copy (${sample.status})`);
  const floorHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(sample.headers))
    if (typeof value === "string" && !["date", "connection", "keep-alive", "transfer-encoding", "content-length"].includes(name))
      floorHeaders[name] = value;
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      path.join(__dirname, "lib", "floor-server.ts"),
      JSON.stringify({ port, status: 429, headers: floorHeaders, body: sample.text }),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  killOnExit(child);
  await new Promise<void>((resolve) =>
    readline.createInterface({ input: child.stdout! }).on("line", (line) => line === "listening" && resolve()),
  );
  targets.push({
    label: "floor",
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    refusal: first.refusal,
    distinct: first.distinct,
    rss: NaN,
    stop: () => void child.kill("SIGTERM"),
  });

  // From an address range the rounds never use (theirs start at 10.0.0.1, 200,000 a round).
  if (WARMUP > 0)
    for (const target of targets)
      await cannon.run(
        { url: target.url, connections: 16, durationSeconds: 300, maxRequests: WARMUP, load: target.distinct(10_000_001) },
        () => 0,
      );
  const refusal = new Map<string, number[]>();
  const distinct = new Map<string, number[]>();
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      const cpu = () => processTreeCpuMs(target.pid);
      const r = await cannon.run(
        { url: target.url, connections: 16, durationSeconds: REFUSAL_SECONDS, maxRequests: 1_000_000, load: target.refusal },
        cpu,
      );
      const d = await cannon.run(
        {
          url: target.url,
          connections: 16,
          durationSeconds: DISTINCT_SECONDS,
          maxRequests: 100_000,
          load: target.distinct(1 + round * 200_000),
        },
        cpu,
      );
      refusal.set(target.label, [...(refusal.get(target.label) ?? []), (r.cpuMs * 1000) / answered(r)]);
      distinct.set(target.label, [...(distinct.get(target.label) ?? []), (d.cpuMs * 1000) / answered(d)]);
      say(
        `round ${round + 1} ${target.label}: refusal ${fmt.int((r.cpuMs * 1000) / answered(r))} µs (${JSON.stringify(r.statuses)}), never-seen ${fmt.int((d.cpuMs * 1000) / answered(d))} µs (${JSON.stringify(d.statuses)})`,
      );
    }
    const floor = refusal.get("floor")!.at(-1)!;
    const peerDistinct = distinct.get("better-auth")!.at(-1)!;
    say(
      `round ${round + 1} ratios: ${targets
        .filter((t) => t.label !== "floor")
        .map(
          (t) =>
            `${t.label} refusal ÷ floor ${fmt.ratio(refusal.get(t.label)!.at(-1)! / floor)}, never-seen ÷ better-auth ${fmt.ratio(distinct.get(t.label)!.at(-1)! / peerDistinct)}`,
        )
        .join("; ")}`,
    );
  }
  for (const target of targets) {
    const ratios = (values: number[], base: number[]) => values.map((value, i) => value / base[i]!);
    const range = (values: number[]) => `${fmt.ratio(Math.min(...values))}–${fmt.ratio(Math.max(...values))}`;
    say(
      `SUMMARY ${target.label}: refusal ${fmt.int(Math.min(...refusal.get(target.label)!))}–${fmt.int(Math.max(...refusal.get(target.label)!))} µs (median ${fmt.int(median(refusal.get(target.label)!))}), ÷ floor ${range(ratios(refusal.get(target.label)!, refusal.get("floor")!))}; never-seen ${fmt.int(Math.min(...distinct.get(target.label)!))}–${fmt.int(Math.max(...distinct.get(target.label)!))} µs, ÷ better-auth ${range(ratios(distinct.get(target.label)!, distinct.get("better-auth")!))}; idle RSS ${fmt.mib(target.rss)} (÷ better-auth ${fmt.ratio(target.rss / targets.find((t) => t.label === "better-auth")!.rss)})`,
    );
  }
  for (const target of targets) await target.stop();
  cannon.close();
}
main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

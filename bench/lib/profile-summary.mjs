// @ts-check
// Self time by function from a V8 .cpuprofile (node --cpu-prof), so that two builds' profiles
// under the same flood can be put side by side:
//   node bench/lib/profile-summary.mjs A.cpuprofile [B.cpuprofile] [--top 40]
// Each function is named `name (file:line)`, the file shortened to its package or .next chunk.
// Self time in ms (give each build the same number of requests, so the columns compare per
// request) and its share of the profile; with two profiles, the change in ms, biggest growth first.
import fs from "node:fs";

/** @typedef {{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }} ProfileNode */
/** @typedef {{ nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }} Profile */

/** @param {string} url */
function shortFile(url) {
  const modules = url.lastIndexOf("node_modules/");
  if (modules !== -1) return url.slice(modules + "node_modules/".length);
  const next = url.indexOf("/.next/");
  if (next !== -1) return url.slice(next + 1);
  return url.replace(/^file:\/\/.*\/(?=[^/]+\/[^/]+$)/, "");
}

/** Self time in µs by function, and the profile's total. @param {string} file */
function selfTimes(file) {
  /** @type {Profile} */
  const profile = JSON.parse(fs.readFileSync(file, "utf8"));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  /** @type {Map<string, number>} */
  const times = new Map();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    const frame = byId.get(id)?.callFrame;
    if (!frame) return;
    const name = `${frame.functionName || "(anonymous)"} (${frame.url ? `${shortFile(frame.url)}:${frame.lineNumber + 1}` : "native"})`;
    times.set(name, (times.get(name) ?? 0) + delta);
    total += delta;
  });
  return { times, total };
}

const args = process.argv.slice(2);
const topAt = args.indexOf("--top");
const top = topAt === -1 ? 40 : Number(args[topAt + 1]);
const files = args.filter((arg, i) => !arg.startsWith("--") && (topAt === -1 || i !== topAt + 1));
if (files.length < 1 || files.length > 2) {
  console.error("usage: node bench/lib/profile-summary.mjs A.cpuprofile [B.cpuprofile] [--top N]");
  process.exit(2);
}
const profiles = files.map(selfTimes);
const share = (/** @type {number} */ us, /** @type {number} */ total) => (total > 0 ? (100 * us) / total : 0);
const names = new Set(profiles.flatMap((p) => [...p.times.keys()]));
const rows = [...names].map((name) => {
  const ms = profiles.map((p) => (p.times.get(name) ?? 0) / 1000);
  const shares = profiles.map((p) => share(p.times.get(name) ?? 0, p.total));
  return { name, ms, shares, change: ms.length === 2 ? ms[1] - ms[0] : ms[0] };
});
rows.sort((a, b) => b.change - a.change);
console.log(`total sampled: ${profiles.map((p, i) => `${files[i]} ${(p.total / 1000).toFixed(0)} ms`).join("; ")}`);
console.log(files.length === 2 ? "A ms (%) | B ms (%) | change ms | function" : "self ms (%) | function");
for (const row of rows.slice(0, top)) {
  const cells = row.ms.map((value, i) => `${value.toFixed(1).padStart(8)} (${row.shares[i].toFixed(1).padStart(4)})`);
  const change = files.length === 2 ? ` | ${row.change >= 0 ? "+" : ""}${row.change.toFixed(1)}` : "";
  console.log(`${cells.join(" | ")}${change} | ${row.name}`);
}

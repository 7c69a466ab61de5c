import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// lib/'s layers, bottom to top, as docs/architecture.md draws them: a room may import its own
// layer or one below, never one above. Read from the page, so the drawing and the code agree.
const ROOT = path.resolve(__dirname, "..");

function layersOfArchitecturePage(): Map<string, number> {
  const lines = readFileSync(path.join(ROOT, "docs/architecture.md"), "utf8").split("\n");
  const start = lines.findIndex((line) => /^lib\/\s+in layers/.test(line));
  const layers = new Map<string, number>();
  let waiting: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === "") break;
    const [names = "", note = ""] = line.trim().split(/\s{2,}/);
    waiting.push(...names.split(/\s+/).map((name) => name.replace(/\/$/, "").replace(/\.(ts|mjs)$/, "")));
    const layer = /^(\d)\./.exec(note)?.[1];
    if (layer) {
      for (const name of waiting) layers.set(name, Number(layer));
      waiting = [];
    }
  }
  return layers;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const file = `${dir}/${name}`;
    if (file === "lib/generated") return [];
    if (statSync(path.join(ROOT, file)).isDirectory()) return sourceFiles(file);
    return /\.(ts|tsx|mjs)$/.test(name) && !/\.test\.ts$/.test(name) ? [file] : [];
  });
}

function resolved(from: string, spec: string): string | null {
  const base = spec.startsWith("@/") ? spec.slice(2) : spec.startsWith(".") ? path.posix.join(path.posix.dirname(from), spec) : null;
  if (base === null) return null;
  const file = ["", ".ts", ".tsx", ".mjs"]
    .map((extension) => base + extension)
    .find((candidate) => existsSync(path.join(ROOT, candidate)) && statSync(path.join(ROOT, candidate)).isFile());
  return file ?? null;
}

const roomOf = (file: string) => file.split("/")[1]!.replace(/\.(ts|mjs)$/, "");

// Known, and to go: config/ parses each room's policies from their own modules, and http/'s
// refusal answers and route table name the rooms' result types. No new line may join them.
const KNOWN = new Set([
  "lib/config/env.ts -> lib/brand/contrast.ts",
  "lib/config/env.ts -> lib/db/target.ts",
  "lib/config/env.ts -> lib/lockout/lockout-rules.ts",
  "lib/config/env.ts -> lib/rate-limit/policies.ts",
  "lib/config/env.ts -> lib/sessions/session-rules.ts",
  "lib/config/variables.ts -> lib/rate-limit/policies.ts",
  "lib/http/fast-path.ts -> lib/rate-limit/limiter.ts",
  "lib/http/refusals.ts -> lib/captcha/altcha.ts",
  "lib/http/refusals.ts -> lib/lockout/lockout-rules.ts",
  "lib/http/refusals.ts -> lib/rate-limit/limiter.ts",
  "lib/http/route-policies.ts -> lib/rate-limit/policies.ts",
  "lib/log/metrics.ts -> lib/rate-limit/store-guard.ts",
]);

describe("lib/'s layers (docs/architecture.md)", () => {
  const layers = layersOfArchitecturePage();
  const files = sourceFiles("lib");

  it("places every room of lib/ in a layer", () => {
    expect(layers.size).toBeGreaterThan(5);
    const unplaced = [...new Set(files.map(roomOf))].filter((room) => !layers.has(room));
    expect(unplaced).toEqual([]);
  });

  it("has no import that points up a layer", () => {
    const upward: string[] = [];
    for (const file of files) {
      const text = readFileSync(path.join(ROOT, file), "utf8");
      for (const match of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)["']([^"']+)["']/g)) {
        const target = resolved(file, match[1]!);
        if (!target?.startsWith("lib/") || target.startsWith("lib/generated/")) continue;
        const edge = `${file} -> ${target}`;
        if ((layers.get(roomOf(file)) ?? 0) < (layers.get(roomOf(target)) ?? 0) && !KNOWN.has(edge)) upward.push(edge);
      }
    }
    expect(upward).toEqual([]);
  });
});

describe("lib/'s import cycles (scripts/import-cycles.mjs, run by npm run lint)", () => {
  it("finds a cycle, type-only imports included, and names each once", async () => {
    const { cyclesOf } = await import("../scripts/import-cycles.mjs");
    const graph = new Map([
      ["lib/a.ts", ["lib/b.ts"]],
      ["lib/b.ts", ["lib/c.ts"]],
      ["lib/c.ts", ["lib/a.ts", "lib/d.ts"]],
      ["lib/d.ts", []],
    ]);
    expect(cyclesOf(graph)).toEqual([["lib/a.ts", "lib/b.ts", "lib/c.ts"]]);
    expect(
      cyclesOf(
        new Map([
          ["lib/a.ts", ["lib/b.ts"]],
          ["lib/b.ts", []],
        ]),
      ),
    ).toEqual([]);
  });

  it("has none in lib/", async () => {
    const { cyclesOf, importGraph } = await import("../scripts/import-cycles.mjs");
    const graph = importGraph();
    // The graph has the edges the files name (accounts.ts reads the factor summary with the password hash).
    expect(graph.get("lib/users/accounts.ts")).toContain("lib/factors/store.ts");
    expect(cyclesOf(graph)).toEqual([]);
  });
});

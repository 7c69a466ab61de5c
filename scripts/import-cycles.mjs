// Fails when lib/ has an import cycle (run by `npm run lint`). Every import counts, type-only ones
// too: a cycle is a layering mistake either way, and it is how rooms start to lean on each other.
// Specifiers resolve as tests/layers.test.ts resolves them ("@/…" and relative paths).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..");
const IMPORT =
  /(?:^|[\s;])(?:import|export)\s[^;]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|^\s*import\s+["']([^"']+)["']/gm;

function sourceFiles(dir) {
  return readdirSync(path.join(ROOT, dir)).flatMap((name) => {
    const file = `${dir}/${name}`;
    if (file === "lib/generated") return [];
    if (statSync(path.join(ROOT, file)).isDirectory()) return sourceFiles(file);
    return /\.(ts|tsx|mjs)$/.test(name) && !/\.test\.ts$/.test(name) ? [file] : [];
  });
}

function resolved(from, spec) {
  const base = spec.startsWith("@/") ? spec.slice(2) : spec.startsWith(".") ? path.posix.join(path.posix.dirname(from), spec) : null;
  if (base === null) return null;
  return (
    ["", ".ts", ".tsx", ".mjs", "/index.ts"]
      .map((extension) => base + extension)
      .find((candidate) => existsSync(path.join(ROOT, candidate)) && statSync(path.join(ROOT, candidate)).isFile()) ?? null
  );
}

/** The import graph of lib/ (its own files only). */
export function importGraph() {
  const graph = new Map();
  for (const file of sourceFiles("lib")) {
    const text = readFileSync(path.join(ROOT, file), "utf8");
    const targets = new Set();
    for (const match of text.matchAll(IMPORT)) {
      const target = resolved(file, match[1] ?? match[2] ?? match[3]);
      if (target?.startsWith("lib/") && !target.startsWith("lib/generated/")) targets.add(target);
    }
    graph.set(file, [...targets].sort());
  }
  return graph;
}

/** Every cycle, each once, as the files it passes through (depth-first, Tarjan-free: lib/ is small). */
export function cyclesOf(graph) {
  const cycles = new Map();
  const state = new Map(); // 1: on the current path, 2: done
  const stack = [];
  const visit = (file) => {
    state.set(file, 1);
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 1) {
        const cycle = stack.slice(stack.indexOf(next));
        // One key per cycle, whichever file it was entered from.
        const first = cycle.indexOf([...cycle].sort()[0]);
        const rotated = [...cycle.slice(first), ...cycle.slice(0, first)];
        cycles.set(rotated.join(" → "), rotated);
      } else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 2);
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return [...cycles.values()];
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const cycles = cyclesOf(importGraph());
  for (const cycle of cycles) console.error(`import cycle: ${[...cycle, cycle[0]].join(" → ")}`);
  if (cycles.length > 0) {
    console.error(`${cycles.length} import cycle(s) in lib/: move the shared piece down a layer (docs/architecture.md).`);
    process.exit(1);
  }
}

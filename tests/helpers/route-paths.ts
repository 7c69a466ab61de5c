import fs from "node:fs";
import path from "node:path";
import { ROUTE_RULES, type RouteRule } from "@/lib/http/route-policies";

// The table's own checks (route-policies.test.ts): which rows a concrete path would reach, as Next.js
// routes it. The app needs none of this at run time: each route names its row (ruleAt).

/** Every route file under `dir` (app/api), as `app/api/…/route.ts`. */
export function routeFilesOnDisk(dir = "app/api"): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return routeFilesOnDisk(full);
    return /^route\.(ts|tsx|js)$/.test(entry.name) ? [full.split(path.sep).join("/")] : [];
  });
}

/** The route file's URL pattern: app/api/v1/reports/[id]/route.ts → /api/v1/reports/[id]. */
export function pathOfRouteFile(file: string): string {
  return `/${file.replace(/^app\//, "").replace(/\/route\.(ts|tsx|js)$/, "")}`;
}

/** Whether a concrete path falls under a pattern: `[id]` is one segment, `[...rest]` one or more. */
function matches(pattern: string, path: string): boolean {
  const expected = pattern.split("/");
  const actual = path.split("/");
  for (let i = 0; i < expected.length; i++) {
    const segment = expected[i]!;
    if (segment.startsWith("[...")) return actual.length > i;
    if (i >= actual.length) return false;
    if (!segment.startsWith("[") && segment !== actual[i]) return false;
  }
  return expected.length === actual.length;
}

/** The rules that claim a concrete path (exactly one for every routed path). */
export function rulesFor(path: string): RouteRule[] {
  // A literal segment beats a dynamic one, as in Next.js routing.
  const claiming = ROUTE_RULES.filter((rule) => matches(rule.path, path));
  const literal = claiming.filter((rule) => !rule.path.split("/").some((segment) => segment.startsWith("[")));
  return literal.length > 0 ? literal : claiming;
}

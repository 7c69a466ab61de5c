import type { PolicyName } from "@/lib/rate-limit/policies";

/**
 * Every route handler under app/api, with the rate-limit policies it applies, in the order it
 * applies them, or `unlimited` with the reason. Matching is on the whole path pattern, never
 * on a prefix: a prefix rule once sent report downloads into the report-build bucket.
 * route-policies.test.ts fails for a route file missing here, and for a path two rules claim.
 */
export type RouteRule = { path: string; file: string } & ({ policies: readonly PolicyName[] } | { unlimited: string });

export const ROUTE_RULES: readonly RouteRule[] = [
  { path: "/api/auth/[...nextauth]", file: "app/api/auth/[...nextauth]/route.ts", policies: ["signInAddress", "signInUsername"] },
  { path: "/api/register", file: "app/api/register/route.ts", policies: ["register"] },
  { path: "/api/altcha/challenge", file: "app/api/altcha/challenge/route.ts", policies: ["altchaChallenge"] },
  { path: "/api/csp-report", file: "app/api/csp-report/route.ts", policies: ["cspReport"] },
  { path: "/api/health", file: "app/api/health/route.ts", unlimited: "cheap, read-only, and polled by load balancers from a few fixed addresses" },
  {
    path: "/api/v1/authentication/token",
    file: "app/api/v1/authentication/token/route.ts",
    policies: ["apiToken", "signInAddress", "signInUsername"],
  },
  { path: "/api/v1/authentication/token/refresh", file: "app/api/v1/authentication/token/refresh/route.ts", policies: ["apiToken"] },
  { path: "/api/v1/me", file: "app/api/v1/me/route.ts", policies: ["api"] },
  { path: "/api/v1/reports", file: "app/api/v1/reports/route.ts", policies: ["apiReports"] },
  { path: "/api/v1/reports/[id]", file: "app/api/v1/reports/[id]/route.ts", policies: ["apiReportDownload"] },
  { path: "/api/v1/download-tokens", file: "app/api/v1/download-tokens/route.ts", policies: ["apiDownloadTokens"] },
];

/** The route file's URL pattern: app/api/v1/reports/[id]/route.ts → /api/v1/reports/[id]. */
export function pathOfRouteFile(file: string): string {
  return `/${file.replace(/^app\//, "").replace(/\/route\.(ts|tsx|js)$/, "")}`;
}

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

/** The policies a route handler applies, from the table; throws for an unclassified route. */
export function policiesFor(path: string): readonly PolicyName[] {
  const rule = ROUTE_RULES.find((candidate) => candidate.path === path);
  if (!rule) throw new Error(`Route ${path} is not in ROUTE_RULES`);
  return "policies" in rule ? rule.policies : [];
}

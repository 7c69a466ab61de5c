import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { defaultPolicies } from "@/lib/rate-limit/policies";
import { pathOfRouteFile, ROUTE_RULES, rulesFor } from "./route-policies";

function routeFilesOnDisk(dir = "app/api"): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return routeFilesOnDisk(full);
    return /^route\.(ts|tsx|js)$/.test(entry.name) ? [full.split(path.sep).join("/")] : [];
  });
}

describe("route policy table", () => {
  it("classifies every route handler on disk, and only those", () => {
    const onDisk = routeFilesOnDisk().sort();
    expect(onDisk.length).toBeGreaterThan(5);
    expect(ROUTE_RULES.map((rule) => rule.file).sort()).toEqual(onDisk);
    for (const rule of ROUTE_RULES) expect(rule.path).toBe(pathOfRouteFile(rule.file));
  });

  it("gives every limited route existing policies and every unlimited one a reason", () => {
    for (const rule of ROUTE_RULES) {
      if ("policies" in rule) {
        expect(rule.policies.length, rule.path).toBeGreaterThan(0);
        for (const policy of rule.policies) expect(defaultPolicies[policy], `${rule.path}: ${policy}`).toBeDefined();
      } else {
        expect(rule.unlimited.length, rule.path).toBeGreaterThan(20);
      }
    }
  });

  it("lets no path be claimed by two rules", () => {
    const samples = [
      ...ROUTE_RULES.map((rule) => rule.path.replace("[...nextauth]", "callback/credentials").replace("[id]", "3f1c2a9e-0000-4000-8000-000000000000")),
      "/api/auth/session",
      "/api/auth/signout",
    ];
    for (const sample of samples) expect(rulesFor(sample).map((rule) => rule.path), sample).toHaveLength(1);
  });

  it("keeps report downloads out of the expensive report bucket", () => {
    expect(rulesFor("/api/v1/reports").map((rule) => "policies" in rule && rule.policies)).toEqual([["apiReports"]]);
    expect(rulesFor("/api/v1/reports/abc").map((rule) => "policies" in rule && rule.policies)).toEqual([["apiReportDownload"]]);
    expect(rulesFor("/api/v1/reportsX")).toEqual([]);
  });

  it("keeps browser telemetry in a bucket of its own", () => {
    const telemetry = ROUTE_RULES.find((rule) => rule.path === "/api/csp-report")!;
    expect("policies" in telemetry && telemetry.policies).toEqual(["cspReport"]);
    const others = ROUTE_RULES.filter((rule) => rule !== telemetry).flatMap((rule) => ("policies" in rule ? rule.policies : []));
    expect(others).not.toContain("cspReport");
  });
});

describe("route handlers apply what the table says", () => {
  // The sign-in pipeline applies these two itself (lib/auth/sign-in-gate.ts).
  const ADMIT_SIGN_IN = ["signInAddress", "signInUsername"];

  it.each(ROUTE_RULES.map((rule) => [rule.path, rule] as const))("%s", (_path, rule) => {
    const source = fs.readFileSync(rule.file, "utf8");
    const applied = [...source.matchAll(/limiter\.consume\("(\w+)"|(admitSignIn)\(/g)].flatMap((match) => (match[2] ? ADMIT_SIGN_IN : [match[1]!]));
    expect(applied).toEqual("policies" in rule ? [...rule.policies] : []);
  });
});

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { defaultPolicies } from "@/lib/rate-limit/policies";
import { pathOfRouteFile, routeFilesOnDisk, rulesFor } from "@/tests/helpers/route-paths";
import { ROUTE_RULES } from "./route-policies";

describe("route policy table", () => {
  it("classifies every route handler on disk, and only those", () => {
    const onDisk = routeFilesOnDisk().sort();
    expect(onDisk.length).toBeGreaterThan(5);
    expect(ROUTE_RULES.map((rule) => rule.file).sort()).toEqual(onDisk);
    for (const rule of ROUTE_RULES) expect(rule.path).toBe(pathOfRouteFile(rule.file));
  });

  it("gives every limited route existing policies and every unlimited one a reason", () => {
    for (const rule of ROUTE_RULES) {
      if ("limits" in rule) {
        expect(rule.limits.length, rule.path).toBeGreaterThan(0);
        for (const { policy } of rule.limits) expect(defaultPolicies[policy], `${rule.path}: ${policy}`).toBeDefined();
      } else {
        expect(rule.unlimited.length, rule.path).toBeGreaterThan(20);
      }
    }
  });

  it("gives every exception to the CSRF rule's same-origin step a reason (lib/http/csrf.ts)", () => {
    for (const rule of ROUTE_RULES) {
      for (const reason of Object.values(rule.senders ?? {})) expect(reason.length, rule.path).toBeGreaterThan(20);
      // A GET changes nothing: an exception there would say something untrue.
      if ("method" in rule && rule.method === "GET") expect(rule.senders, rule.path).toBeUndefined();
    }
  });

  it("takes a Bearer request past the same-origin step only where the route authenticates by that token alone", () => {
    const bearer = ROUTE_RULES.filter((rule) => rule.senders?.bearer).map((rule) => rule.path);
    expect(bearer.sort()).toEqual(["/api/v1/download-tokens", "/api/v1/reports"]);
    for (const rule of ROUTE_RULES.filter((candidate) => candidate.senders?.bearer)) {
      const source = readFileSync(rule.file, "utf8");
      // apiCaller reads the cookie only when no Authorization is sent (lib/auth/api-auth.ts).
      expect(source, rule.file).toMatch(/apiCaller\(request, gate/);
      expect(source, rule.file).not.toMatch(/cookie|liveSession|getServerSession/i);
    }
  });

  it("lets no path be claimed by two rules", () => {
    const samples = [
      ...ROUTE_RULES.map((rule) => rule.path.replace("[...rest]", "_log").replace("[id]", "3f1c2a9e-0000-4000-8000-000000000000")),
      "/api/auth/callback/credentials/x",
      "/api/auth/signin/credentials",
    ];
    for (const sample of samples)
      expect(
        rulesFor(sample).map((rule) => rule.path),
        sample,
      ).toHaveLength(1);
  });

  it("keeps report downloads out of the expensive report bucket", () => {
    const policies = (path: string) => rulesFor(path).map((rule) => ("limits" in rule ? rule.limits.map((limit) => limit.policy) : []));
    expect(policies("/api/v1/reports")).toEqual([["apiReports"]]);
    expect(policies("/api/v1/reports/abc")).toEqual([["apiReportDownload"]]);
    expect(rulesFor("/api/v1/reportsX")).toEqual([]);
  });

  it("sends every next-auth path but the four the app uses to the 404 route", () => {
    for (const path of [
      "/api/auth/_log",
      "/api/auth/callback/credentials/x",
      "/api/auth/signin",
      "/api/auth/providers",
      "/api/auth/callback/github",
    ]) {
      expect(
        rulesFor(path).map((rule) => rule.path),
        path,
      ).toEqual(["/api/auth/[...rest]"]);
    }
  });

  it("keeps browser telemetry in a bucket of its own", () => {
    const telemetry = ROUTE_RULES.find((rule) => rule.path === "/api/csp-report")!;
    expect("limits" in telemetry && telemetry.limits.map((limit) => limit.policy)).toEqual(["cspReport"]);
    const others = ROUTE_RULES.filter((rule) => rule !== telemetry).flatMap((rule) =>
      "limits" in rule ? rule.limits.map((limit) => limit.policy) : [],
    );
    expect(others).not.toContain("cspReport");
  });
});

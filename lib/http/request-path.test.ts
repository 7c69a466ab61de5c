import { describe, expect, it } from "vitest";
import { requestPath } from "./request-path.mjs";

describe("requestPath (the path server.mjs matches, as Next.js routes it)", () => {
  it.each([
    ["/api/auth/callback/credentials", "/api/auth/callback/credentials"],
    ["/api/auth/callback/credentials?callbackUrl=/x", "/api/auth/callback/credentials"],
    ["/api/auth/callback/./credentials", "/api/auth/callback/credentials"],
    ["/api/auth/x/../callback/credentials", "/api/auth/callback/credentials"],
    ["/api/auth/callback/%2e/credentials", "/api/auth/callback/credentials"],
    ["/api/auth/callback/x/.%2E/credentials", "/api/auth/callback/credentials"],
    ["/./api/auth/callback/credentials", "/api/auth/callback/credentials"],
    ["/api/auth/callback/credentials#x", "/api/auth/callback/credentials"],
    ["/", "/"],
  ])("reads %s as %s", (target, path) => {
    expect(requestPath(target)).toBe(path);
  });

  // Next.js answers these with a 404 or a redirect, not the route: they must not match it here either.
  // Next.js 16 (router-utils/resolve-routes.js) answers 308 to any target whose part before `?` holds
  // `//` or `\`, before routing, and absolute-form targets always do (the second attacker review).
  it.each([
    "/api/auth/callback/credential%73",
    "//api/auth/callback/credentials",
    "/api//auth/callback/credentials",
    "/api\\auth",
    "/api/auth//../callback/credentials",
    "/api/auth/callback/credentials#//",
    "http://evil.example/api/auth/callback/credentials",
    "http://u:p@x/api/auth/callback/credentials",
    "HTTP://x:99/api/auth/callback/credentials",
    "/a//../../api/health",
  ])("leaves %s unlike the route's path", (target) => {
    expect(["/api/auth/callback/credentials", "/api/health"]).not.toContain(requestPath(target));
  });

  it("has no path for a target that is none", () => {
    expect(requestPath("*")).toBeNull();
    expect(requestPath("http://x:99999/")).toBeNull();
  });
});

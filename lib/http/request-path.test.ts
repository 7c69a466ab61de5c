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
    ["http://gate.example/api/auth/callback/credentials", "/api/auth/callback/credentials"],
    ["/", "/"],
  ])("reads %s as %s", (target, path) => {
    expect(requestPath(target)).toBe(path);
  });

  // Next.js answers these with a 404 or a redirect, not the route: they must not match it here either.
  it.each(["/api/auth/callback/credential%73", "//api/auth/callback/credentials", "/api//auth/callback/credentials", "/api\\auth"])(
    "leaves %s unlike the route's path",
    (target) => {
      expect(requestPath(target)).not.toBe("/api/auth/callback/credentials");
    },
  );

  it("has no path for a target that is none", () => {
    expect(requestPath("*")).toBeNull();
    expect(requestPath("javascript:alert(1)")).toBeNull();
  });
});

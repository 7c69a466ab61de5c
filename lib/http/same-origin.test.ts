import { describe, expect, it } from "vitest";
import { appOrigin, isSameOriginRequest } from "./same-origin";

const APP = "https://app.example";
const check = (headers: Record<string, string>) => isSameOriginRequest(new Headers(headers), APP);

describe("isSameOriginRequest", () => {
  it("takes Sec-Fetch-Site: same-origin, and nothing else the header says", () => {
    expect(check({ "sec-fetch-site": "same-origin" })).toBe(true);
    for (const site of ["same-site", "cross-site", "none", "Same-Origin", ""])
      expect(check({ "sec-fetch-site": site, origin: APP }), site).toBe(false);
  });

  it("falls back to an exact Origin when the browser sends no Sec-Fetch-Site", () => {
    expect(check({ origin: APP })).toBe(true);
    for (const origin of [
      "https://evil.example",
      "https://sub.app.example",
      "http://app.example",
      "https://app.example.evil.example",
      "null",
    ])
      expect(check({ origin }), origin).toBe(false);
    expect(check({})).toBe(false);
  });

  it("reads the app's origin from NEXTAUTH_URL, next-auth's fallback without it", () => {
    expect(appOrigin("https://app.example/base/")).toBe(APP);
    expect(appOrigin(undefined)).toBe("http://localhost:3000");
  });
});

import { describe, expect, it } from "vitest";
import { cookieName, cookieOf, secureCookies, setCookieValue, type GatehouseCookie } from "./cookies";

const https = { http: { publicUrl: "https://login.example.com" } };
const http = { http: { publicUrl: "http://localhost:3000" } };
const EVERY: GatehouseCookie[] = ["session", "device", "pendingSignIn", "remember", "locale", "forgotEmail"];

describe("the cookie room: one Secure and prefix rule for every cookie", () => {
  it("is Secure and prefixed under an https public URL, plain over http, whatever NODE_ENV says", () => {
    expect(secureCookies(https)).toBe(true);
    expect(secureCookies(http)).toBe(false);
    expect(secureCookies({ http: { publicUrl: undefined } })).toBe(false);
    for (const cookie of EVERY) {
      expect(cookieName(http, cookie)).not.toMatch(/^__/);
      expect(setCookieValue(http, cookie, "v", { maxAgeSeconds: 60 })).not.toContain("Secure");
      const set = setCookieValue(https, cookie, "v", { maxAgeSeconds: 60 });
      expect(set).toMatch(/^__(Host|Secure)-/);
      expect(set).toContain("; Secure");
      expect(set).toContain("; HttpOnly");
      expect(set).toContain("; SameSite=Lax");
      expect(set).not.toMatch(/Domain=/i);
    }
  });

  it("gives __Host- to every cookie at Path=/ and __Secure- to the one scoped to a page (__Host- needs Path=/)", () => {
    for (const cookie of EVERY.filter((c) => c !== "forgotEmail")) {
      expect(setCookieValue(https, cookie, "v", { maxAgeSeconds: 1 })).toMatch(/^__Host-[^=]+=v; Path=\/;/);
    }
    expect(setCookieValue(https, "forgotEmail", "v", { maxAgeSeconds: 1 })).toMatch(
      /^__Secure-gatehouse-forgot-email=v; Path=\/forgot-password; Max-Age=1;/,
    );
  });

  it("writes a life in whole seconds, never negative, or an instant; a zero life removes the cookie", () => {
    expect(setCookieValue(http, "device", "v", { maxAgeSeconds: 59.9 })).toContain("Max-Age=59;");
    expect(setCookieValue(http, "device", "", { maxAgeSeconds: -5 })).toContain("Max-Age=0;");
    expect(setCookieValue(http, "session", "v", { expiresAtMs: Date.UTC(2030, 0, 1) })).toContain("Expires=Tue, 01 Jan 2030 00:00:00 GMT;");
    expect(setCookieValue(http, "session", "", { expiresAtMs: 0 })).toMatch(/Expires=Thu, 01 Jan 1970 [^;]+; Max-Age=0/);
  });

  it("reads only the name this instance sets: a plain cookie a sibling planted is nothing under https", () => {
    const jar = (pairs: Record<string, string>) => ({ get: (name: string) => (name in pairs ? { value: pairs[name]! } : undefined) });
    expect(cookieOf(jar({ "gatehouse-device": "planted" }), https, "device")).toBeUndefined();
    expect(cookieOf(jar({ "__Host-gatehouse-device": "mine" }), https, "device")).toBe("mine");
    expect(cookieOf(jar({ "gatehouse-device": "mine" }), http, "device")).toBe("mine");
  });
});

import { describe, expect, it } from "vitest";
import { cookieName } from "@/lib/http/cookies";
import { clearedSessionCookie, nextAuthCookies, sessionClaimsOfCookies, sessionCookie } from "./session-cookie";

const SECRET = "s".repeat(40);
const https = { http: { publicUrl: "https://login.example.com" }, session: { secret: SECRET, maxAgeSeconds: 3600 } };
const http = { ...https, http: { publicUrl: "http://localhost:3000" } };

describe("the session cookie, in next-auth's format under the cookie room's name", () => {
  it("is __Host- under https (a sibling subdomain can neither plant nor shadow it), plain on http", () => {
    expect(cookieName(https, "session")).toBe("__Host-next-auth.session-token");
    expect(cookieName(http, "session")).toBe("next-auth.session-token");
    // next-auth is told the same name, with what __Host- requires: Secure, Path=/ and no Domain.
    const { sessionToken } = nextAuthCookies(https);
    expect(sessionToken.name).toBe("__Host-next-auth.session-token");
    expect(sessionToken.options).toMatchObject({ secure: true, path: "/" });
    expect(sessionToken.options).not.toHaveProperty("domain");
    expect(nextAuthCookies(http).sessionToken.options).toMatchObject({ secure: false });
  });

  it("writes a session cookie next-auth can read back, with the __Host- attributes", async () => {
    const header = await sessionCookie(https, { sub: "u1", email: "a@example.com", sid: "s1" }, Date.now());
    expect(header).toMatch(/^__Host-next-auth\.session-token=[^;]+; Path=\/; Expires=/);
    expect(header).toContain("; Secure");
    expect(header).toContain("; HttpOnly");
    expect(header).not.toMatch(/Domain=/i);
    const value = header.split(";")[0]!.split("=")[1]!;
    expect(await sessionClaimsOfCookies(https, { "__Host-next-auth.session-token": value })).toMatchObject({ sub: "u1", sid: "s1" });
    // The same value under the other name, or signed with another secret, is no session.
    expect(await sessionClaimsOfCookies(https, { "next-auth.session-token": value })).toBeNull();
    expect(
      await sessionClaimsOfCookies({ ...https, session: { secret: "t".repeat(40) } }, { "__Host-next-auth.session-token": value }),
    ).toBeNull();
    expect(await sessionClaimsOfCookies(https, { "__Host-next-auth.session-token": "not-a-jwt" })).toBeNull();
    expect(clearedSessionCookie(https)).toMatch(/^__Host-next-auth\.session-token=; Path=\/; Expires=Thu, 01 Jan 1970 [^;]+; Max-Age=0/);
  });
});

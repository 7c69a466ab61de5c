import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  clearedSessionCookie,
  cookieName,
  csrfTokenOfCookies,
  csrfVerified,
  nextAuthCookies,
  sessionClaimsOfCookies,
  sessionCookie,
} from "./cookies";

const SECRET = "s".repeat(40);
const https = { http: { publicUrl: "https://login.example.com" }, session: { secret: SECRET, maxAgeSeconds: 3600 } };
const http = { ...https, http: { publicUrl: "http://localhost:3000" } };

const csrfCookie = (token: string, secret = SECRET) => `${token}|${createHash("sha256").update(`${token}${secret}`).digest("hex")}`;

describe("next-auth's cookies, named in one place", () => {
  it("are __Host- under https (a sibling subdomain can neither plant nor shadow them), plain on http", () => {
    for (const which of ["sessionToken", "csrfToken", "callbackUrl"] as const) {
      expect(cookieName(https, which)).toMatch(/^__Host-next-auth\./);
      expect(cookieName(http, which)).toMatch(/^next-auth\./);
    }
    // next-auth is told the same names, with what __Host- requires: Secure, Path=/ and no Domain.
    for (const option of Object.values(nextAuthCookies(https))) {
      expect(option.name).toMatch(/^__Host-/);
      expect(option.options).toMatchObject({ secure: true, path: "/" });
      expect(option.options).not.toHaveProperty("domain");
    }
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

  it("checks the CSRF double submit as next-auth does: the form's token is the one in this server's cookie", () => {
    const jar = { "__Host-next-auth.csrf-token": csrfCookie("abc") };
    expect(csrfTokenOfCookies(https, jar)).toBe("abc");
    expect(csrfVerified(https, jar, "abc")).toBe(true);
    expect(csrfVerified(https, jar, "abd")).toBe(false);
    // A cookie another secret signed, a bare token, or the plain name under https: no token.
    expect(csrfTokenOfCookies(https, { "__Host-next-auth.csrf-token": csrfCookie("abc", "other".repeat(8)) })).toBeNull();
    expect(csrfTokenOfCookies(https, { "__Host-next-auth.csrf-token": "abc" })).toBeNull();
    expect(csrfVerified(https, { "next-auth.csrf-token": csrfCookie("abc") }, "abc")).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import { newRemember, rememberDigest, rememberDigestOf } from "./remember";

describe("remember this browser's secret", () => {
  it("is 256 random bits; the row keeps only its digest, and the same secret always gives the same digest", () => {
    const a = newRemember(1_000);
    const b = newRemember(1_000);
    expect(a.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a.secret).not.toBe(b.secret);
    expect(a.grant).toEqual({ digest: rememberDigest(a.secret), untilMs: 1_000 });
    expect(a.grant.digest).not.toContain(a.secret);
    expect(rememberDigestOf(a.secret)).toBe(a.grant.digest);
  });

  it("reads nothing from a value that is not a secret of ours", () => {
    for (const value of [undefined, null, "", "short", "A".repeat(42), "A".repeat(44), `${"A".repeat(42)}=`, "A".repeat(10_000)])
      expect(rememberDigestOf(value)).toBeNull();
  });
});

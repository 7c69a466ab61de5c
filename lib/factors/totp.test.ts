import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { base32Of, groupsOfFour, matchingStep, newTotpSecret, totpCodeAt, totpStepAt, totpUri } from "./totp";

// RFC 6238 Appendix B: the SHA-1 seed is the ASCII string "12345678901234567890".
const RFC_SEED = new TextEncoder().encode("12345678901234567890");
const RFC_VECTORS: [seconds: number, code: string][] = [
  [59, "94287082"],
  [1111111109, "07081804"],
  [1111111111, "14050471"],
  [1234567890, "89005924"],
  [2000000000, "69279037"],
  [20000000000, "65353130"],
];

function hasOathtool(): boolean {
  try {
    execFileSync("oathtool", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

describe("TOTP (RFC 6238)", () => {
  it.each(RFC_VECTORS)("at T=%i the 8-digit SHA-1 code is %s", (seconds, code) => {
    expect(totpCodeAt(RFC_SEED, seconds * 1000, 8)).toBe(code);
  });

  it.each(RFC_VECTORS)("at T=%i the 6-digit code is the last six digits of %s", (seconds, code) => {
    expect(totpCodeAt(RFC_SEED, seconds * 1000)).toBe(code.slice(2));
  });

  it("accepts a code one step either side of now, and names the step it was made in", () => {
    const nowMs = 1_111_111_111_000;
    const step = totpStepAt(nowMs);
    for (const delta of [-1, 0, 1]) {
      const code = totpCodeAt(RFC_SEED, nowMs + delta * 30_000);
      expect(matchingStep(RFC_SEED, code, nowMs)).toBe(step + delta);
    }
  });

  it("refuses a code two steps away, a wrong code and anything that is not six digits", () => {
    const nowMs = 1_234_567_890_000;
    expect(matchingStep(RFC_SEED, totpCodeAt(RFC_SEED, nowMs - 60_000), nowMs)).toBeNull();
    expect(matchingStep(RFC_SEED, totpCodeAt(RFC_SEED, nowMs + 60_000), nowMs)).toBeNull();
    const right = totpCodeAt(RFC_SEED, nowMs);
    const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, "0");
    expect(matchingStep(RFC_SEED, wrong, nowMs)).toBeNull();
    for (const shape of ["", "12345", "1234567", "12345a", " 123456", "１２３４５６"])
      expect(matchingStep(RFC_SEED, shape, nowMs)).toBeNull();
  });

  it("makes 160-bit secrets, a URI authenticator apps read, and the secret in groups of four", () => {
    const secret = newTotpSecret();
    expect(secret.byteLength).toBe(20);
    expect(base32Of(newTotpSecret())).not.toBe(base32Of(secret));
    const uri = new URL(totpUri(secret, "Acme Corp", "ann@example.com"));
    expect(uri.protocol).toBe("otpauth:");
    expect(uri.host).toBe("totp");
    expect(decodeURIComponent(uri.pathname)).toBe("/Acme Corp:ann@example.com");
    expect(uri.searchParams.get("secret")).toBe(base32Of(secret));
    expect(uri.searchParams.get("issuer")).toBe("Acme Corp");
    expect(uri.searchParams.get("digits")).toBe("6");
    expect(uri.searchParams.get("period")).toBe("30");
    expect(groupsOfFour("JBSWY3DPEHPK3PXP")).toBe("JBSW Y3DP EHPK 3PXP");
    expect(groupsOfFour("ABCDEF")).toBe("ABCD EF");
  });

  it.skipIf(!hasOathtool())("agrees with oathtool, an independent implementation", () => {
    const secret = newTotpSecret();
    const nowMs = Date.now();
    const theirs = execFileSync("oathtool", ["--totp", "-b", base32Of(secret), "-N", `@${Math.floor(nowMs / 1000)}`], {
      encoding: "utf8",
    }).trim();
    expect(totpCodeAt(secret, nowMs)).toBe(theirs);
  });
});

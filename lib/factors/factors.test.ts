import { describe, expect, it } from "vitest";
import {
  codeOfSeed,
  deviceCodeDigest,
  deviceCodeSeedTag,
  newDeviceCodeSeed,
  openAddress,
  sealAddress,
  windowDeviceCode,
} from "./device-confirmation";
import { canonicalRecoveryCode, newRecoveryCodes, recoveryCodeDigest, RECOVERY_CODE_COUNT } from "./recovery-codes";
import { openSecret, sealKeyOf, sealSecret } from "./sealed-secret";
import { newTotpSecret } from "./totp";

describe("sealed TOTP secrets", () => {
  const key = sealKeyOf("instance-secret");

  it("open for the account they were sealed for, under the same key", () => {
    const secret = newTotpSecret();
    const sealed = sealSecret(key, secret, "user-a");
    expect(sealed).not.toContain(Buffer.from(secret).toString("base64url"));
    expect(openSecret(key, sealed, "user-a")).toEqual(secret);
  });

  it("do not open for another account, another key, or after tampering", () => {
    const sealed = sealSecret(key, newTotpSecret(), "user-a");
    expect(openSecret(key, sealed, "user-b")).toBeNull();
    expect(openSecret(sealKeyOf("another-secret"), sealed, "user-a")).toBeNull();
    const bytes = Buffer.from(sealed, "base64url");
    bytes[14] = bytes[14]! ^ 1;
    expect(openSecret(key, bytes.toString("base64url"), "user-a")).toBeNull();
    expect(openSecret(key, "", "user-a")).toBeNull();
    expect(openSecret(key, "short", "user-a")).toBeNull();
  });
});

describe("a device confirmation's sealed address", () => {
  it("opens for its username under its secret, and for nothing else", () => {
    const sealed = sealAddress("code-secret", "key-a", "owner@example.com");
    expect(sealed).not.toContain("owner");
    expect(openAddress("code-secret", "key-a", sealed)).toBe("owner@example.com");
    expect(openAddress("code-secret", "key-b", sealed)).toBeNull();
    expect(openAddress("another-secret", "key-a", sealed)).toBeNull();
    expect(openAddress("code-secret", "key-a", null)).toBeNull();
    // A key of the authenticator apps' purpose does not open it, though derived from the same secret.
    expect(openSecret(sealKeyOf("code-secret"), sealed, "key-a")).toBeNull();
  });
});

describe("a window's device code", () => {
  const user = "5f0c2a8e-0000-4000-8000-000000000001";

  it("is one code per account, window and seed: a new seed, window or account makes another", () => {
    const seed = newDeviceCodeSeed();
    const code = windowDeviceCode("code-secret", user, seed, 100);
    expect(code).toMatch(/^\d{6}$/);
    expect(windowDeviceCode("code-secret", user, seed, 100)).toBe(code);
    // Six digits collide by chance once in a million; ten fresh seeds all colliding would be a fault.
    const others = Array.from({ length: 10 }, () => windowDeviceCode("code-secret", user, newDeviceCodeSeed(), 100));
    expect(others.every((other) => other === code)).toBe(false);
    expect(newDeviceCodeSeed()).not.toBe(seed);
  });

  it("is told current only for the seed and window it was made under", () => {
    const seed = newDeviceCodeSeed();
    const digest = deviceCodeDigest("code-secret", windowDeviceCode("code-secret", user, seed, 7));
    expect(codeOfSeed("code-secret", user, seed, 7, digest)).toBe(true);
    expect(codeOfSeed("code-secret", user, newDeviceCodeSeed(), 7, digest)).toBe(false);
    expect(codeOfSeed("code-secret", user, seed, 8, digest)).toBe(false);
    expect(codeOfSeed("code-secret", user, seed, 7, null)).toBe(false);
    expect(codeOfSeed("code-secret", user, seed, 7, "short")).toBe(false);
  });

  it("names its seed by a tag that does not hold it", () => {
    const seed = newDeviceCodeSeed();
    const tag = deviceCodeSeedTag("code-secret", seed);
    expect(tag).toBe(deviceCodeSeedTag("code-secret", seed));
    expect(tag).not.toContain(seed);
    expect(deviceCodeSeedTag("another-secret", seed)).not.toBe(tag);
  });
});

describe("recovery codes", () => {
  it("are ten distinct codes of 50 bits, shaped k7rq2-9xw4m", () => {
    const codes = newRecoveryCodes();
    expect(codes).toHaveLength(RECOVERY_CODE_COUNT);
    expect(new Set(codes).size).toBe(RECOVERY_CODE_COUNT);
    for (const code of codes) expect(code).toMatch(/^[0-9a-hjkmnp-tv-z]{5}-[0-9a-hjkmnp-tv-z]{5}$/);
    // 10 characters of a 32-letter alphabet: 50 bits.
    expect(10 * Math.log2(32)).toBeGreaterThanOrEqual(50);
  });

  it("read back case-blind, with or without the dash, with Crockford's look-alikes", () => {
    expect(canonicalRecoveryCode("K7RQ2-9XW4M")).toBe("k7rq29xw4m");
    expect(canonicalRecoveryCode(" k7rq29xw4m ")).toBe("k7rq29xw4m");
    expect(canonicalRecoveryCode("k7rq2-9xw4o")).toBe("k7rq29xw40");
    expect(canonicalRecoveryCode("i7rq2-9xwlm")).toBe("17rq29xw1m");
  });

  it("refuse the wrong shape", () => {
    for (const typed of ["", "k7rq2", "k7rq2-9xw4m1", "k7rq2--9xw4m", "k7rq2 9xw4m", "k7rq2-9xw4u", "123456"])
      expect(canonicalRecoveryCode(typed)).toBeNull();
  });

  it("are stored as digests bound to their account", () => {
    const digest = recoveryCodeDigest("key", "user-a", "k7rq29xw4m");
    expect(digest).not.toContain("k7rq2");
    expect(recoveryCodeDigest("key", "user-b", "k7rq29xw4m")).not.toBe(digest);
    expect(recoveryCodeDigest("other", "user-a", "k7rq29xw4m")).not.toBe(digest);
    expect(recoveryCodeDigest("key", "user-a", "k7rq29xw4m")).toBe(digest);
  });
});

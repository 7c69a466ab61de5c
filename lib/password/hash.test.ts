import { describe, expect, it } from "vitest";
import { argon2Hasher, dummyHash, hashPassword, needsRehash, verifyPassword } from "./hash";
import { OWASP_ARGON2ID, TEST_ARGON2ID, argon2Params } from "./hash";

describe("Argon2id parameters", () => {
  it("default to OWASP's minimum: 19 MiB, t=2, p=1", () => {
    expect(OWASP_ARGON2ID).toEqual({ memoryCostKiB: 19_456, timeCost: 2, parallelism: 1 });
    expect(argon2Params("owasp")).toBe(OWASP_ARGON2ID);
    expect(argon2Params("test")).toBe(TEST_ARGON2ID);
  });

  it("produce a PHC-format argon2id hash carrying those parameters", async () => {
    const stored = await hashPassword("correct horse battery", OWASP_ARGON2ID);
    expect(stored).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    expect(await verifyPassword(stored, "correct horse battery")).toBe(true);
    expect(await verifyPassword(stored, "correct horse batterY")).toBe(false);
  });
});

describe("verifyPassword", () => {
  it("returns false for a hash it cannot parse instead of throwing", async () => {
    expect(await verifyPassword("not a hash", "anything")).toBe(false);
  });
});

describe("needsRehash", () => {
  it("is true for weaker parameters and false for current ones", async () => {
    const weak = await hashPassword("pw", TEST_ARGON2ID);
    expect(needsRehash(weak, OWASP_ARGON2ID)).toBe(true);
    expect(needsRehash(weak, TEST_ARGON2ID)).toBe(false);
    expect(needsRehash("$2b$10$abcdefghijklmnopqrstuuE7V8dZ0u5eVvP7m5xX0x7O2gGgYJjW", TEST_ARGON2ID)).toBe(true);
  });
});

describe("dummyHash", () => {
  it("is made once per parameter set, with those parameters", async () => {
    const first = await dummyHash(TEST_ARGON2ID);
    expect(await dummyHash(TEST_ARGON2ID)).toBe(first);
    expect(first).toContain("$m=1024,t=1,p=1$");
    expect(needsRehash(first, TEST_ARGON2ID)).toBe(false);
  });
});

describe("NFC inside hash and verify", () => {
  // "é" and "î" composed (NFC) and decomposed (base letter + combining mark, NFD): one passphrase, two byte strings.
  const COMPOSED = "caf\u00e9 au lait s'il vous pla\u00eet";
  const DECOMPOSED = COMPOSED.normalize("NFD");

  it("verifies the composed and the decomposed form of one password against one hash, whichever form was hashed", async () => {
    expect(COMPOSED).not.toBe(DECOMPOSED);
    const hasher = argon2Hasher(TEST_ARGON2ID);
    for (const hashed of [COMPOSED, DECOMPOSED]) {
      const stored = await hashPassword(hashed, TEST_ARGON2ID);
      const viaHasher = await hasher.hash(hashed);
      for (const typed of [COMPOSED, DECOMPOSED]) {
        expect(await verifyPassword(stored, typed), `${hashed === COMPOSED ? "NFC" : "NFD"} hashed, typed the other way`).toBe(true);
        expect(await hasher.verify(viaHasher, typed)).toEqual({ valid: true, rehash: false });
      }
      expect(await verifyPassword(stored, "cafe au lait s'il vous plait")).toBe(false);
    }
  });
});

import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { wrongPasswordFingerprint } from "./wrong-passwords";

const SECRET = "a".repeat(43);
const scope = { usernameKey: "username-digest", clientKey: "198.51.100.7" };

describe("wrong-password fingerprints", () => {
  it("are 64 bits, the same for the same password from the same client (NFC or not)", () => {
    const fingerprint = wrongPasswordFingerprint(SECRET, scope, "caf\u00e9 password");
    expect(fingerprint).toMatch(/^[A-Za-z0-9_-]{11}$/);
    expect(wrongPasswordFingerprint(SECRET, scope, "cafe\u0301 password")).toBe(fingerprint);
  });

  it("differ by password, client, username and secret", () => {
    const fingerprint = wrongPasswordFingerprint(SECRET, scope, "old password");
    expect(
      new Set([
        fingerprint,
        wrongPasswordFingerprint(SECRET, scope, "old passwore"),
        wrongPasswordFingerprint(SECRET, { ...scope, clientKey: "198.51.100.8" }, "old password"),
        wrongPasswordFingerprint(SECRET, { ...scope, usernameKey: "another-digest" }, "old password"),
        wrongPasswordFingerprint("b".repeat(43), scope, "old password"),
      ]).size,
    ).toBe(5);
  });

  it("are not an unkeyed digest of the password", () => {
    const fingerprint = wrongPasswordFingerprint(SECRET, scope, "old password");
    for (const algorithm of ["sha256", "sha1", "md5"])
      expect(createHash(algorithm).update("old password").digest("base64url")).not.toContain(fingerprint);
  });
});

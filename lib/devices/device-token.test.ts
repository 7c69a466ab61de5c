import { describe, expect, it } from "vitest";
import { deviceIdOf, doorCheckedDeviceId, newDeviceId, signDeviceToken, verifyDeviceToken } from "./device-token";

const SECRET = "k".repeat(32);
const DAY_MS = 86_400_000;

describe("device tokens", () => {
  const id = newDeviceId();
  const token = signDeviceToken(SECRET, { id, expiresAtMs: 180 * DAY_MS }, "alice-key");

  it("verify for the username they were issued for, until they expire", () => {
    expect(verifyDeviceToken(SECRET, token, "alice-key", 0)).toEqual({ id, expiresAtMs: 180 * DAY_MS });
    expect(verifyDeviceToken(SECRET, token, "alice-key", 180 * DAY_MS - 1)).not.toBeNull();
    expect(verifyDeviceToken(SECRET, token, "alice-key", 180 * DAY_MS)).toBeNull();
  });

  it("carry no username and give nothing for another one", () => {
    expect(token).not.toContain("alice");
    expect(verifyDeviceToken(SECRET, token, "bob-key", 0)).toBeNull();
  });

  it.each([
    ["another secret", (t: string) => t, "x".repeat(32)],
    ["a changed expiry", (t: string) => t.replace(/\.(\d+)\./, (_m, s: string) => `.${Number(s) + 1}.`), SECRET],
    // Another first character than the random id's own (replacing it with "A" failed 1 run in 64).
    ["a changed id", (t: string) => `${t.startsWith("A") ? "B" : "A"}${t.slice(1)}`, SECRET],
    ["a truncated mac", (t: string) => t.slice(0, -1), SECRET],
    ["an extra part", (t: string) => `${t}.x`, SECRET],
    ["a changed door mac", (t: string) => t.replace(/.$/, (c) => (c === "A" ? "B" : "A")), SECRET],
    ["a malformed door mac", (t: string) => `${t.slice(0, t.lastIndexOf("."))}.short`, SECRET],
    ["an oversized value", (t: string) => `${t}${"A".repeat(100)}`, SECRET],
    ["an empty value", () => "", SECRET],
  ])("are ignored with %s", (_name, change, secret) => {
    expect(verifyDeviceToken(secret, change(token), "alice-key", 0)).toBeNull();
  });

  it("still verify without the door's MAC, as issued before it (until their next sign-in replaces them)", () => {
    const legacy = token.slice(0, token.lastIndexOf("."));
    expect(legacy.split(".")).toHaveLength(3);
    expect(verifyDeviceToken(SECRET, legacy, "alice-key", 0)).toEqual({ id, expiresAtMs: 180 * DAY_MS });
  });

  it("show the door, which has no username, their id by the second MAC alone", () => {
    expect(doorCheckedDeviceId(SECRET, token, 0)).toBe(id);
    expect(doorCheckedDeviceId(SECRET, token, 180 * DAY_MS)).toBeNull();
    expect(doorCheckedDeviceId("x".repeat(32), token, 0)).toBeNull();
    expect(
      doorCheckedDeviceId(
        SECRET,
        token.replace(/.$/, (c) => (c === "A" ? "B" : "A")),
        0,
      ),
    ).toBeNull();
    // A made-up token in the right shape, and one from before the second MAC: nothing the door can check.
    expect(doorCheckedDeviceId(SECRET, `${id}.99999999999.${"A".repeat(43)}.${"A".repeat(22)}`, 0)).toBeNull();
    expect(doorCheckedDeviceId(SECRET, token.slice(0, token.lastIndexOf(".")), 0)).toBeNull();
  });

  it("name their id for the lookup, and nothing for junk", () => {
    expect(deviceIdOf(token)).toBe(id);
    expect(deviceIdOf("not a token")).toBeNull();
    expect(deviceIdOf(undefined)).toBeNull();
  });
});

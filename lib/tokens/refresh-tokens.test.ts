import { createHash, randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPglite, freshPostgres, postgresUrl, type TestDatabase } from "@/tests/helpers/databases";
import { openDatabase, type Database } from "@/lib/db/client";
import { resolveDatabaseTarget } from "@/lib/db/target";
import { issueRefreshToken, isWellFormedRefreshToken, refreshTokenDigest, revokeRefreshFamily, rotateRefreshToken } from "./refresh-tokens";

const TTL_MS = 30 * 86_400_000;
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

/** Computed here, not with the module's helper, so a change to the stored form fails the test. */
function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

function refreshTokenSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`refresh tokens on ${label}`, () => {
    let testDb: TestDatabase;
    let database: Database;

    beforeAll(async () => {
      testDb = await makeDatabase();
      database = await openDatabase(resolveDatabaseTarget(testDb.url));
    });

    afterAll(async () => {
      await database?.close();
      await testDb?.dispose();
    });

    // Tokens belong to an account (deleted with it), so each test's user exists.
    const newUser = async () =>
      (await database.prisma.user.create({ data: { email: `${randomUUID()}@example.com`, passwordHash: "x" }, select: { id: true } })).id;
    const rows = (familyId: string) => database.prisma.refreshToken.findMany({ where: { familyId }, orderBy: { createdAt: "asc" } });
    const live = (familyId: string) => database.prisma.refreshToken.count({ where: { familyId, rotatedAt: null, revokedAt: null } });

    it("issues 32 random bytes as base64url and stores only their SHA-256 digest", async () => {
      const userId = await newUser();
      const issued = await issueRefreshToken(database.prisma, userId, null, TTL_MS, T0);
      expect(issued.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(issued.token, "base64url")).toHaveLength(32);
      expect(issued.newFamily).toBe(true);
      expect(issued.expiresAtMs).toBe(T0 + TTL_MS);
      const [row, ...others] = await rows(issued.familyId);
      expect(others).toEqual([]);
      expect(row).toMatchObject({
        tokenHash: sha256Hex(issued.token),
        userId,
        familyId: issued.familyId,
        rotatedAt: null,
        revokedAt: null,
      });
      expect(row!.expiresAt.getTime()).toBe(T0 + TTL_MS);
      expect(refreshTokenDigest(issued.token)).toBe(sha256Hex(issued.token));

      const sibling = await issueRefreshToken(database.prisma, userId, issued.familyId, TTL_MS, T0);
      expect(sibling).toMatchObject({ familyId: issued.familyId, newFamily: false });
      expect(sibling.token).not.toBe(issued.token);
    });

    it("rotates a token into a new one of the same family and marks the old one rotated", async () => {
      const userId = await newUser();
      const first = await issueRefreshToken(database.prisma, userId, null, TTL_MS, T0);
      const rotated = await rotateRefreshToken(database.prisma, first.token, TTL_MS, T0 + 1_000);
      expect(rotated).toEqual({
        ok: true,
        userId,
        familyId: first.familyId,
        credentialGeneration: 0,
        token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
        expiresAtMs: T0 + 1_000 + TTL_MS,
        newFamily: false,
      });
      if (!rotated.ok) throw new Error("unreachable");
      expect(rotated.token).not.toBe(first.token);
      const [old, next] = await rows(first.familyId);
      expect(old).toMatchObject({ tokenHash: sha256Hex(first.token), rotatedAt: new Date(T0 + 1_000), revokedAt: null });
      expect(next).toMatchObject({
        tokenHash: sha256Hex(rotated.token),
        rotatedAt: null,
        revokedAt: null,
        expiresAt: new Date(T0 + 1_000 + TTL_MS),
      });
    });

    it("refuses malformed and unknown tokens without touching the table", async () => {
      const before = await database.prisma.refreshToken.count();
      for (const token of ["", "abc", "x".repeat(44), `${"A".repeat(42)}=`, `${"A".repeat(42)}+`, randomBytes(32).toString("base64url")]) {
        expect(await rotateRefreshToken(database.prisma, token, TTL_MS, T0)).toEqual({ ok: false, reason: "unknown" });
      }
      expect(isWellFormedRefreshToken(randomBytes(32).toString("base64url"))).toBe(true);
      expect(await database.prisma.refreshToken.count()).toBe(before);
    });

    it("refuses a token at its expiry instant, accepts it a millisecond before", async () => {
      const userId = await newUser();
      const a = await issueRefreshToken(database.prisma, userId, null, TTL_MS, T0);
      expect(await rotateRefreshToken(database.prisma, a.token, TTL_MS, T0 + TTL_MS)).toEqual({
        ok: false,
        reason: "expired",
        familyId: a.familyId,
        userId,
      });
      expect(await live(a.familyId)).toBe(1);
      const b = await issueRefreshToken(database.prisma, userId, null, TTL_MS, T0);
      expect((await rotateRefreshToken(database.prisma, b.token, TTL_MS, T0 + TTL_MS - 1)).ok).toBe(true);
    });

    it("ends a family at its absolute end however often it rotates (rotation renews the token, not the family)", async () => {
      const userId = await newUser();
      const familyLifetimeMs = 90 * 86_400_000;
      let current = await issueRefreshToken(database.prisma, userId, null, TTL_MS, T0, {
        expiresAtMs: T0 + familyLifetimeMs,
        client: "API client",
        address: "203.0.113.x",
      });
      // Rotated every 20 days: each new token would reach 30 days further, but none passes day 90.
      let nowMs = T0;
      for (let day = 20; day <= 80; day += 20) {
        nowMs = T0 + day * 86_400_000;
        const next = await rotateRefreshToken(database.prisma, current.token, TTL_MS, nowMs);
        if (!next.ok) throw new Error(`rotation on day ${day} failed: ${next.reason}`);
        expect(next.expiresAtMs).toBe(Math.min(nowMs + TTL_MS, T0 + familyLifetimeMs));
        current = { ...current, token: next.token };
      }
      const rows = await database.prisma.refreshToken.findMany({ where: { userId } });
      expect(new Set(rows.map((row) => row.familyExpiresAt.getTime()))).toEqual(new Set([T0 + familyLifetimeMs]));
      expect(new Set(rows.map((row) => row.address))).toEqual(new Set(["203.0.113.x"]));
      expect(await rotateRefreshToken(database.prisma, current.token, TTL_MS, T0 + familyLifetimeMs)).toEqual({
        ok: false,
        reason: "expired",
        familyId: current.familyId,
        userId,
      });
    });

    it("refuses a token of a revoked family as revoked", async () => {
      const userId = await newUser();
      const issued = await issueRefreshToken(database.prisma, userId, null, TTL_MS, T0);
      expect(await revokeRefreshFamily(database.prisma, issued.familyId, T0 + 5)).toBe(1);
      expect(await rotateRefreshToken(database.prisma, issued.token, TTL_MS, T0 + 10)).toEqual({
        ok: false,
        reason: "revoked",
        familyId: issued.familyId,
        userId,
      });
      expect(await revokeRefreshFamily(database.prisma, issued.familyId, T0 + 20)).toBe(0);
    });

    it("treats a rotated token presented again as reuse and revokes the whole family, newest token included", async () => {
      const userId = await newUser();
      const first = await issueRefreshToken(database.prisma, userId, null, TTL_MS, T0);
      const bystander = await issueRefreshToken(database.prisma, userId, null, TTL_MS, T0);
      const second = await rotateRefreshToken(database.prisma, first.token, TTL_MS, T0 + 1_000);
      if (!second.ok) throw new Error("rotation failed");
      const third = await rotateRefreshToken(database.prisma, second.token, TTL_MS, T0 + 2_000);
      if (!third.ok) throw new Error("rotation failed");

      expect(await rotateRefreshToken(database.prisma, first.token, TTL_MS, T0 + 3_000)).toEqual({
        ok: false,
        reason: "reused",
        familyId: first.familyId,
        userId,
      });
      const family = await rows(first.familyId);
      expect(family.map((row) => row.revokedAt?.getTime() ?? null)).toEqual([T0 + 3_000, T0 + 3_000, T0 + 3_000]);
      expect(await live(first.familyId)).toBe(0);
      expect(await rotateRefreshToken(database.prisma, third.token, TTL_MS, T0 + 4_000)).toEqual({
        ok: false,
        reason: "revoked",
        familyId: first.familyId,
        userId,
      });
      // A replay of the middle token is still reported as reuse.
      expect(await rotateRefreshToken(database.prisma, second.token, TTL_MS, T0 + 5_000)).toMatchObject({ ok: false, reason: "reused" });
      // Other families of the same user are untouched.
      expect(await live(bystander.familyId)).toBe(1);
    });

    it("lets exactly one of ten concurrent rotations of one token win; the rest are reuse and kill the family", async () => {
      const issued = await issueRefreshToken(database.prisma, await newUser(), null, TTL_MS, T0);
      const results = await Promise.all(
        Array.from({ length: 10 }, () => rotateRefreshToken(database.prisma, issued.token, TTL_MS, T0 + 1_000)),
      );
      expect(results.filter((result) => result.ok)).toHaveLength(1);
      expect(results.filter((result) => !result.ok && result.reason === "reused")).toHaveLength(9);
      expect(await live(issued.familyId)).toBe(0);
      expect(await database.prisma.refreshToken.count({ where: { familyId: issued.familyId } })).toBe(2);
    });

    it("leaves no live token when a replay races the legitimate holder's rotation", async () => {
      for (let round = 0; round < 15; round++) {
        const first = await issueRefreshToken(database.prisma, await newUser(), null, TTL_MS, T0);
        const current = await rotateRefreshToken(database.prisma, first.token, TTL_MS, T0 + 1_000);
        if (!current.ok) throw new Error("rotation failed");
        const [replay, legitimate] = await Promise.all([
          rotateRefreshToken(database.prisma, first.token, TTL_MS, T0 + 2_000),
          rotateRefreshToken(database.prisma, current.token, TTL_MS, T0 + 2_000),
        ]);
        expect(replay).toMatchObject({ ok: false, reason: "reused" });
        // Whichever commits first, the family ends with no usable token.
        expect(legitimate.ok || legitimate.reason === "revoked").toBe(true);
        expect(await live(first.familyId)).toBe(0);
      }
    });
  });
}

refreshTokenSuite("embedded PGlite", freshPglite);
const url = postgresUrl();
describe.skipIf(!url)("refresh tokens on PostgreSQL (needs TEST_DATABASE_URL)", () => {
  // Registered either way: without the service its tests are listed as skipped.
  refreshTokenSuite("PostgreSQL", () => freshPostgres(url!));
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPglite, type TestDatabase } from "@/tests/helpers/databases";
import { openDatabase, type Database } from "@/lib/db/client";
import { resolveDatabaseTarget } from "@/lib/db/target";
import { hash } from "@node-rs/argon2";
import { argon2Hasher, verifyPassword } from "@/lib/password/hash";
import { argon2Params } from "@/lib/password/hash";
import { registerAccount, verifyCredentials } from "./accounts";

const params = argon2Params("test");
const hasher = argon2Hasher(params);
// "é" composed (NFC) and decomposed (e + combining acute, NFD): one passphrase, two byte strings.
const COMPOSED = "caf\u00e9 au lait s'il vous plaît";
const DECOMPOSED = COMPOSED.normalize("NFD");

describe("passwords are NFC before hashing and verifying", () => {
  let testDb: TestDatabase;
  let database: Database;

  beforeAll(async () => {
    testDb = await freshPglite();
    database = await openDatabase(resolveDatabaseTarget(testDb.url));
  });

  afterAll(async () => {
    await database?.close();
    await testDb?.dispose();
  });

  it("signs in with either form of a passphrase registered in either form", async () => {
    expect(COMPOSED).not.toBe(DECOMPOSED);
    await registerAccount(database.prisma, { email: "nfd@example.com", password: DECOMPOSED }, hasher, Date.now());
    for (const typed of [COMPOSED, DECOMPOSED])
      expect(await verifyCredentials(database.sql, { email: "nfd@example.com", password: typed }, hasher)).toMatchObject({
        email: "nfd@example.com",
      });
    const { passwordHash } = await database.prisma.user.findUniqueOrThrow({ where: { email: "nfd@example.com" } });
    expect(await verifyPassword(passwordHash!, COMPOSED)).toBe(true);
  });

  it("keeps verifying a hash of the raw (non-NFC) string made before the rule, and replaces it with the NFC hash", async () => {
    // hashPassword would take the NFC form: the old hash is made of the raw string, as before the rule.
    const legacy = await hash(DECOMPOSED, {
      algorithm: 2,
      memoryCost: params.memoryCostKiB,
      timeCost: params.timeCost,
      parallelism: params.parallelism,
    });
    const user = await database.prisma.user.create({ data: { email: "legacy@example.com", passwordHash: legacy } });
    // NFC typed: the old hash is of the other form, so only the same raw form opens it.
    expect(await verifyCredentials(database.sql, { email: "legacy@example.com", password: COMPOSED }, hasher)).toBeNull();
    expect(await verifyCredentials(database.sql, { email: "legacy@example.com", password: DECOMPOSED }, hasher)).toMatchObject({
      rehashed: true,
    });
    const { passwordHash } = await database.prisma.user.findUniqueOrThrow({ where: { id: user.id } });
    expect(await verifyPassword(passwordHash!, COMPOSED)).toBe(true);
    expect(await verifyCredentials(database.sql, { email: "legacy@example.com", password: COMPOSED }, hasher)).toMatchObject({
      rehashed: false,
    });
  });

  it("refuses a wrong password in either form", async () => {
    expect(await verifyCredentials(database.sql, { email: "nfd@example.com", password: "cafe\u0301 au lait" }, hasher)).toBeNull();
  });
});

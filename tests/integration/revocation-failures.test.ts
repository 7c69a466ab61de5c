import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  accountFormPost,
  altchaPayload,
  browserSignIn,
  browserSignOut,
  createAccount,
  deviceCookieOf,
  resetByLink,
  sessionPairOf,
  sessionWith,
  signedInBrowser,
  tokenSignIn,
} from "../helpers/browser";
import { freshPglite, freshPostgres, postgresUrl, type TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader } from "../helpers/peer";
import { holdSignInWrites } from "../helpers/sign-in-writes";

type Gate = import("@/lib/app").Gatehouse;
const OLD = "the right passphrase";
const NEW = "a brand new passphrase";

/**
 * A password change ends what the old password started, whenever it was written: a sign-in whose
 * check read the old hash before the change but writes its session or refresh family after it
 * (attack found in review), and everything when the tidy-up after the new hash fails.
 */
describe("a password change against sign-ins in flight", () => {
  let database: TestDatabase;
  let gate: Gate;

  beforeAll(async () => {
    announcePeerHeader();
    const url = postgresUrl();
    database = url ? await freshPostgres(url) : await freshPglite();
    gate = await servedGatehouse(database.url, { HASH_QUEUE: "100", HASH_CONCURRENCY: "4" });
    for (const name of ["victim", "victim2", "victim3", "victim4", "victim5", "leaver"])
      await createAccount(gate, `${name}@example.com`, OLD);
  });

  afterAll(async () => {
    await closeServed(gate);
    await database?.dispose();
  });

  async function changePassword(cookie: string) {
    return accountFormPost(gate, "/api/account/password", cookie, {
      altcha: await altchaPayload(),
      currentPassword: OLD,
      newPassword: NEW,
    });
  }

  /** Known devices of the username: a device is the owner's lane, so one left over is a way past the change. */
  const devicesOf = (email: string) => gate.prisma.knownDevice.count({ where: { usernameKey: gate.usernameKey(email) } });

  it("a browser sign-in with the old password, verified before the change and written after it, writes nothing", async () => {
    const owner = await signedInBrowser("victim@example.com", OLD);
    // Stands for the natural gap between Argon2id (on the old hash) and the sign-in's writes.
    const held = holdSignInWrites(gate);
    const attacker = browserSignIn("victim@example.com", OLD);
    await held.reached;
    expect((await changePassword(owner)).status).toBe(303);
    held.release();
    const res = await attacker.finally(held.restore);
    // The password was right when it was checked and not when its sign-in was written: the
    // generic answer, no cookie, and no session, device or event behind it.
    expect(res.status).toBe(401);
    expect(sessionPairOf(res)).toBeNull();
    expect(deviceCookieOf(res)).toBeNull();
    // The one known device left is the owner's, which the change issued to the browser that made it.
    expect(await devicesOf("victim@example.com")).toBe(1);
    const user = await gate.prisma.user.findUniqueOrThrow({ where: { email: "victim@example.com" } });
    const unrevokedOld = { userId: user.id, revokedAt: null, credentialGeneration: { lt: user.credentialGeneration } };
    expect(await gate.prisma.browserSession.count({ where: unrevokedOld })).toBe(0);
    expect(await gate.prisma.securityEvent.count({ where: { userId: user.id, kind: "sign_in_succeeded" } })).toBe(1);
    expect((await browserSignIn("victim@example.com", OLD)).status).toBe(401);
  });

  it("an API sign-in with the old password in flight gets the generic answer, no tokens and no device", async () => {
    const owner = await signedInBrowser("victim2@example.com", OLD);
    const held = holdSignInWrites(gate);
    const attacker = tokenSignIn("victim2@example.com", OLD);
    await held.reached;
    expect((await changePassword(owner)).status).toBe(303);
    held.release();
    const res = await attacker.finally(held.restore);
    expect(res.status).toBe(401);
    expect(await res.json()).not.toHaveProperty("refresh_token");
    expect(await devicesOf("victim2@example.com")).toBe(1);
  });

  it("a change in flight when the owner resets the password is not stored: the reset stands", async () => {
    const intruder = await signedInBrowser("victim5@example.com", OLD);
    const { id } = await gate.prisma.user.findUniqueOrThrow({ where: { email: "victim5@example.com" } });
    const RESET = "the owner's reset passphrase";
    // The owner's reset lands while the intruder's change hashes its new password: after the
    // change's check read the account, before it stores.
    const hash = gate.hasher.hash.bind(gate.hasher);
    vi.spyOn(gate.hasher, "hash").mockImplementationOnce(async (password) => {
      const res = await resetByLink(gate, id, RESET);
      expect(res.status).toBe(200);
      return hash(password);
    });
    const res = await changePassword(intruder);
    expect(res.status).toBe(401);
    expect(sessionPairOf(res)).toBeNull();
    // (The reset's password first: a wrong one would make the next new device wait for a mailed code.)
    expect((await browserSignIn("victim5@example.com", RESET)).status).toBe(200);
    expect((await browserSignIn("victim5@example.com", NEW)).status).toBe(401);
  });

  it("when the tidy-up after the new hash fails, every other session is dead anyway", async () => {
    const owner = await signedInBrowser("victim3@example.com", OLD);
    const thief = await signedInBrowser("victim3@example.com", OLD);
    vi.spyOn(gate.sessions, "revokeAllExcept").mockRejectedValueOnce(new Error("connection reset"));
    await changePassword(owner).catch(() => null);
    expect((await browserSignIn("victim3@example.com", NEW)).status).toBe(200);
    expect((await sessionWith(thief)).body).toEqual({});
  });

  it("a sign-out whose session record cannot be ended says so and keeps the cookie, and the retry ends it", async () => {
    const cookie = await signedInBrowser("leaver@example.com", OLD);
    vi.spyOn(gate.sessions, "revoke").mockRejectedValueOnce(new Error("connection reset"));
    const failed = await browserSignOut(cookie);
    expect(failed.status).toBe(503);
    expect(await failed.json()).toMatchObject({ error: "busy" });
    expect(failed.headers.getSetCookie().some((value) => /session-token=;/.test(value))).toBe(false);
    expect((await sessionWith(cookie)).body).toMatchObject({ user: { email: "leaver@example.com" } });
    expect((await browserSignOut(cookie)).status).toBe(200);
    expect((await sessionWith(cookie)).body).toEqual({});
  });

  it("ends the report download links too, which a stolen session could have minted", async () => {
    const owner = await signedInBrowser("victim4@example.com", OLD);
    const db = gate.prisma;
    const user = await db.user.findUniqueOrThrow({ where: { email: "victim4@example.com" }, select: { id: true } });
    const report = await db.report.create({ data: { userId: user.id, content: {} } });
    await db.downloadToken.create({
      data: { tokenHash: "a".repeat(43), userId: user.id, reportId: report.id, expiresAt: new Date(Date.now() + 600_000) },
    });
    expect((await changePassword(owner)).status).toBe(303);
    expect(await db.downloadToken.count({ where: { userId: user.id } })).toBe(0);
  });
});

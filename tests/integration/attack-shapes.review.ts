import { describe, expect, it } from "vitest";
import {
  accountFormPost,
  altchaPayload,
  browserSignIn,
  createAccount,
  sessionIdOf,
  sessionPairOf,
  signedInBrowser,
  sessionWith,
} from "../helpers/browser";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the right passphrase";
const ELEVEN_MINUTES_MS = 11 * 60_000;

/**
 * The attacker's review of issue 59, each finding as the attacker ran it: a thief holding a
 * session cookie and the password of an account with a second factor.
 */
export function reviewShapes(current: () => { gate: Gate }) {
  const gate = () => current().gate;

  describe("a stolen session cookie and the password do not change a factor account's password (issue 59)", () => {
    /** A factor account, and a browser session of it (signed in before the factor was on: the thief's copy). */
    async function factorAccountWithSession(email: string) {
      const userId = await createAccount(gate(), email, PASSWORD);
      const cookie = await signedInBrowser(email, PASSWORD);
      const secret = (await gate().factors.beginTotp(userId, "test-setup", Date.now()))!;
      const { totpCodeAt } = await import("@/lib/factors/totp");
      expect(await gate().factors.confirmTotp(userId, "test-setup", totpCodeAt(secret, Date.now()), Date.now())).toBe(true);
      return { userId, cookie, sid: await sessionIdOf(gate(), cookie) };
    }

    const changePassword = async (cookie: string, newPassword: string) =>
      accountFormPost(gate(), "/api/account/password", cookie, { currentPassword: PASSWORD, newPassword, altcha: await altchaPayload() });

    const ageAuthentication = (sid: string) =>
      gate().prisma.browserSession.update({ where: { id: sid }, data: { authenticatedAt: new Date(Date.now() - ELEVEN_MINUTES_MS) } });

    it("asks a session whose last proof is older than 10 minutes to confirm it (with its factor) first, and changes nothing", async () => {
      const email = "factor-thief@example.com";
      const { cookie, sid } = await factorAccountWithSession(email);
      const owner = await signedInBrowser(email, PASSWORD).catch(() => null);
      // The owner's browser with the factor on signs in in two steps; the thief's copy is `cookie`.
      expect(owner).toBeNull();
      await ageAuthentication(sid);

      const res = await changePassword(cookie, "a password the owner does not know");
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: "reauthentication_required" });
      // The password is the owner's still: it passes (and asks for the factor), the thief's does not.
      const old = await browserSignIn(email, PASSWORD);
      expect(old.status).toBe(401);
      expect(await old.json()).toMatchObject({ error: "mfa_required" });
      expect((await sessionWith(cookie)).body).toHaveProperty("user");
    });

    it("changes it after a confirmation that included the factor, and the renewed session keeps its original absolute end", async () => {
      const email = "factor-confirmed@example.com";
      const { userId, cookie, sid } = await factorAccountWithSession(email);
      await ageAuthentication(sid);
      // What POST /api/account/reauthenticate records once the password and the code were right.
      expect(await gate().sessions.reauthenticated(userId, sid, Date.now())).toBe(true);
      const before = await gate().prisma.browserSession.findUniqueOrThrow({ where: { id: sid } });

      const res = await changePassword(cookie, "a brand new passphrase here");
      expect(res.status).toBe(303);
      const renewed = sessionPairOf(res)!;
      const after = await gate().prisma.browserSession.findUniqueOrThrow({ where: { id: await sessionIdOf(gate(), renewed) } });
      expect(after.expiresAt.getTime()).toBe(before.expiresAt.getTime());
      expect(after.authenticatedAt.getTime()).toBe(before.authenticatedAt.getTime());
    });
  });

  describe("a password change does not restart the session's absolute lifetime (issue 59)", () => {
    it("keeps the end the sign-in set, however often the password is changed", async () => {
      const email = "lifetime-keeper@example.com";
      await createAccount(gate(), email, PASSWORD);
      let cookie = await signedInBrowser(email, PASSWORD);
      const sid = await sessionIdOf(gate(), cookie);
      // A session that signed in long ago: its end is near.
      const endMs = Date.now() + 60_000;
      await gate().prisma.browserSession.update({ where: { id: sid }, data: { expiresAt: new Date(endMs) } });
      let password = PASSWORD;
      for (const next of ["first changed passphrase", "second changed passphrase"]) {
        const res = await accountFormPost(gate(), "/api/account/password", cookie, {
          currentPassword: password,
          newPassword: next,
          altcha: await altchaPayload(),
        });
        expect(res.status).toBe(303);
        cookie = sessionPairOf(res)!;
        password = next;
        const renewed = await gate().prisma.browserSession.findUniqueOrThrow({ where: { id: await sessionIdOf(gate(), cookie) } });
        expect(renewed.expiresAt.getTime()).toBe(endMs);
      }
    });
  });

  describe("a body the client cuts off is the client's, not a database outage (issue 59, slow bodies)", () => {
    it("answers 400 and counts no outage when the upload ends early (requestTimeout, or the client leaving)", async () => {
      const unavailable = async () => (await gate().metrics.unavailable.get()).values.reduce((sum, value) => sum + value.value, 0);
      const before = await unavailable();
      const { PEER_HEADER, freshAddress } = await import("../helpers/peer");
      const { POST } = await import("@/app/api/register/route");
      // What Node's request stream does when its socket closes mid-body: an "aborted" ECONNRESET.
      const cutOff = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"email":"slow@example.com","pass'));
          controller.error(Object.assign(new Error("aborted"), { code: "ECONNRESET" }));
        },
      });
      const res = await POST(
        new Request("http://localhost/api/register", {
          method: "POST",
          headers: { "content-type": "application/json", [PEER_HEADER]: freshAddress() },
          body: cutOff,
          duplex: "half",
        } as RequestInit),
      );
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: "invalid_input" });
      expect(await unavailable()).toBe(before);
    });
  });
}

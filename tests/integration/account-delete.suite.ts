import { NextRequest } from "next/server";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { MailMessage } from "@/lib/mail/types";
import {
  accountFormPost,
  altchaPayload,
  browserSignIn,
  refreshTokens,
  sessionPairOf,
  sessionWith,
  signedInBrowser,
  tokenSignIn,
} from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { freshAddress, PEER_HEADER } from "../helpers/peer";
import { servedForSuite } from "../helpers/served-suite";
import { onEachDatabase } from "../helpers/each-database";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the right passphrase";
const DELETE = "/api/account/delete";

/**
 * "Delete account" (issue 57, item 3) through the real routes and a real database: the typed
 * address and a fresh authentication, every row gone in one transaction (or none, whatever fails
 * in between), every session and token dead at once, a goodbye mail, and the address free again.
 */
export function accountDeleteSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`delete account on ${label}`, () => {
    const served = servedForSuite(
      makeDatabase,
      ["leaving", "typo", "crash"].map((name) => `${name}@example.com`),
      PASSWORD,
    );
    let gate: Gate;
    let sent: MailMessage[];
    beforeAll(() => {
      gate = served.gate;
    });

    afterEach(() => vi.restoreAllMocks());

    function watchMail() {
      sent = [];
      vi.spyOn(gate.mailer, "send").mockImplementation((message: MailMessage) => void sent.push(message));
    }

    /** Every row about the account, by table: what a deletion must leave at zero. */
    async function rowsOf(userId: string, email: string) {
      const usernameKey = gate.usernameKey(email);
      const byUser = { where: { userId } };
      return {
        users: await gate.prisma.user.count({ where: { id: userId } }),
        browserSessions: await gate.prisma.browserSession.count(byUser),
        refreshTokens: await gate.prisma.refreshToken.count(byUser),
        securityEvents: await gate.prisma.securityEvent.count(byUser),
        emailTokens: await gate.prisma.emailToken.count(byUser),
        knownDevices: await gate.prisma.knownDevice.count({ where: { usernameKey } }),
        lockouts: await gate.prisma.signInLockout.count({ where: { usernameKey } }),
      };
    }

    const me = async (accessToken: string) =>
      (await import("@/app/api/v1/me/route")).GET(
        new NextRequest("http://localhost/api/v1/me", {
          headers: { authorization: `Bearer ${accessToken}`, [PEER_HEADER]: freshAddress() },
        }),
      );

    it("deletes every row about the account, ends every session and token at once, mails a goodbye, and frees the address", async () => {
      const email = "leaving@example.com";
      const { id: userId } = await gate.prisma.user.findUniqueOrThrow({ where: { email } });
      const elsewhere = await signedInBrowser(email, PASSWORD);
      const tokens = (await (await tokenSignIn(email, PASSWORD)).json()) as { access_token: string; refresh_token: string };
      const here = await signedInBrowser(email, PASSWORD);
      // A wrong password last, so the account has a lockout row too.
      expect((await browserSignIn(email, "a wrong guess")).status).toBe(401);
      await gate.emailTokens.issue(userId, "reset_password", 0, Date.now(), 3_600_000);
      const before = await rowsOf(userId, email);
      for (const count of Object.values(before)) expect(count).toBeGreaterThan(0);

      watchMail();
      // The address typed differently (case, spaces) is the same address.
      const res = await accountFormPost(gate, DELETE, here, { confirm: "  Leaving@Example.com " });
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe("/?notice=account_deleted");
      const cookies = res.headers.getSetCookie();
      expect(cookies.some((cookie) => /session-token=;.*Max-Age=0/.test(cookie))).toBe(true);
      expect(cookies.some((cookie) => /gatehouse-device=;.*Max-Age=0/.test(cookie))).toBe(true);

      expect(await rowsOf(userId, email)).toEqual(Object.fromEntries(Object.keys(before).map((key) => [key, 0])));
      for (const cookie of [here, elsewhere]) expect((await sessionWith(cookie)).body).toEqual({});
      expect((await me(tokens.access_token)).status).toBe(401);
      expect((await refreshTokens(tokens.refresh_token)).status).toBe(401);

      await gate.background.idle();
      expect(sent.map((message) => [message.to, message.subject])).toEqual([[email, "Your Gatehouse account is deleted"]]);
      expect(sent[0]!.text).toContain("/register");

      // The address registers again, as a new account.
      const { POST } = await import("@/app/api/register/route");
      const again = await POST(
        new Request("http://localhost/api/register", {
          method: "POST",
          headers: { "content-type": "application/json", [PEER_HEADER]: freshAddress() },
          body: JSON.stringify({ email, password: "another long passphrase", altcha: await altchaPayload() }),
        }),
      );
      expect(again.status).toBe(202);
      const reborn = await gate.prisma.user.findUniqueOrThrow({ where: { email } });
      expect(reborn.id).not.toBe(userId);
    });

    it("needs the account's own address typed: anything else changes nothing", async () => {
      const cookie = await signedInBrowser("typo@example.com", PASSWORD);
      for (const confirm of ["", "typo@example.org", "yes", "leaving@example.com"]) {
        const res = await accountFormPost(gate, DELETE, cookie, { confirm, json: "true" });
        expect(res.status, confirm).toBe(400);
        expect(await res.json()).toMatchObject({ error: "invalid_input", fields: { confirm: expect.any(String) } });
      }
      expect(await gate.prisma.user.count({ where: { email: "typo@example.com" } })).toBe(1);
      expect((await sessionWith(cookie)).body).toMatchObject({ user: { email: "typo@example.com" } });
    });

    it("a failure in the middle leaves the account whole: one transaction", async () => {
      const email = "crash@example.com";
      const { id: userId } = await gate.prisma.user.findUniqueOrThrow({ where: { email } });
      const cookie = await signedInBrowser(email, PASSWORD);
      expect((await browserSignIn(email, "a wrong guess")).status).toBe(401);
      const before = await rowsOf(userId, email);
      // The database fails the last statement of the transaction, after the account row went.
      await gate.prisma.$executeRawUnsafe(
        `CREATE FUNCTION fail_delete() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'disk gone'; END $$ LANGUAGE plpgsql`,
      );
      await gate.prisma.$executeRawUnsafe(
        `CREATE TRIGGER fail_delete BEFORE DELETE ON "SignInLockout" FOR EACH ROW EXECUTE FUNCTION fail_delete()`,
      );
      try {
        const res = await accountFormPost(gate, DELETE, cookie, { confirm: email, json: "true" });
        expect(res.status).toBeGreaterThanOrEqual(500);
        expect(await res.text()).not.toContain("disk gone");
      } finally {
        await gate.prisma.$executeRawUnsafe(`DROP TRIGGER fail_delete ON "SignInLockout"`);
        await gate.prisma.$executeRawUnsafe(`DROP FUNCTION fail_delete()`);
      }
      expect(await rowsOf(userId, email)).toEqual(before);
      expect((await sessionWith(cookie)).body).toMatchObject({ user: { email } });
      // And with the failure gone, the same request deletes it.
      expect((await accountFormPost(gate, DELETE, cookie, { confirm: email, json: "true" })).status).toBe(200);
      expect((await rowsOf(userId, email)).users).toBe(0);
      expect(sessionPairOf(await browserSignIn(email, PASSWORD))).toBeNull();
    });
  });
}

onEachDatabase("delete account", ({ label, makeDatabase }) => accountDeleteSuite(label, makeDatabase));

import { NextRequest } from "next/server";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  altchaPayload,
  browserSignIn,
  createAccount,
  deviceCookieOf,
  refreshTokens,
  sessionPairOf,
  sessionWith,
  signedInBrowser,
  tokenSignIn,
} from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";
import { watchPasswordChecks } from "../helpers/verifications";
import { onEachDatabase } from "../helpers/each-database";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the right passphrase";
const NEW_PASSWORD = "a brand new passphrase";

/**
 * Change password through the real route and a real database: the current password pays the
 * sign-in pipeline, the new one meets the rules, and every other session, API session and
 * known-device cookie ends.
 */
export function changePasswordSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`change password on ${label}`, () => {
    let database: TestDatabase;
    let gate: Gate;
    let checks: Awaited<ReturnType<typeof watchPasswordChecks>>;

    beforeAll(async () => {
      announcePeerHeader();
      database = await makeDatabase();
      gate = await servedGatehouse(database.url, { HASH_QUEUE: "100" });
      for (const name of ["changer", "rules", "guesser", "crosssite", "passkeyowner"])
        await createAccount(gate, `${name}@example.com`, PASSWORD);
      checks = await watchPasswordChecks(gate);
    });

    beforeEach(() => checks.reset());

    afterAll(async () => {
      await closeServed(gate);
      await database?.dispose();
    });

    async function formTokenOf(cookie: string) {
      const { decode } = await import("next-auth/jwt");
      const session = cookie.split("; ").find((pair) => pair.includes("session-token="))!;
      const claims = await decode({ token: session.split("=")[1]!, secret: gate.config.session.secret });
      return (await import("@/lib/http/form-token")).sessionFormToken(gate.config.session.secret, claims!.sid as string);
    }

    async function changePassword(
      cookie: string,
      fields: Record<string, string>,
      headers: Record<string, string> = { "sec-fetch-site": "same-origin" },
    ) {
      const body = new URLSearchParams({ formToken: await formTokenOf(cookie), altcha: await altchaPayload(), ...fields });
      return (await import("@/app/api/account/password/route")).POST(
        new NextRequest("http://localhost/api/account/password", {
          method: "POST",
          headers: { cookie, "content-type": "application/x-www-form-urlencoded", [PEER_HEADER]: freshAddress(), ...headers },
          body: body.toString(),
        }),
      );
    }

    it("changes the password and ends every other browser session, API session and device cookie; this browser stays, under a new session", async () => {
      const first = await browserSignIn("changer@example.com", PASSWORD);
      const oldDevice = deviceCookieOf(first)!;
      const here = sessionPairOf(first)!;
      const elsewhere = await signedInBrowser("changer@example.com", PASSWORD);
      const app = ((await (await tokenSignIn("changer@example.com", PASSWORD)).json()) as { refresh_token: string }).refresh_token;

      checks.reset();
      const res = await changePassword(`${here}; gatehouse-device=${oldDevice}`, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe("/account?notice=password_changed");
      expect(checks.verified()).toBe(1);
      const newDevice = deviceCookieOf(res);
      expect(newDevice).not.toBeNull();

      expect((await sessionWith(elsewhere)).body).toEqual({});
      expect((await refreshTokens(app)).status).toBe(401);
      // This browser carries on under a new session; a copy of its old cookie does not.
      const renewed = sessionPairOf(res);
      expect(renewed).not.toBeNull();
      expect((await sessionWith(renewed!)).body).toMatchObject({ user: { email: "changer@example.com" } });
      expect((await sessionWith(here)).body).toEqual({});
      // Every device cookie from before is forgotten; only the one just issued is known.
      expect(await gate.devices.recognise(oldDevice, gate.usernameKey("changer@example.com"), Date.now())).toBeNull();
      expect(await gate.devices.recognise(newDevice, gate.usernameKey("changer@example.com"), Date.now())).not.toBeNull();

      expect((await browserSignIn("changer@example.com", PASSWORD)).status).toBe(401);
      // From the device just issued: a new one would now wait for a mailed code (a failure just happened).
      expect((await browserSignIn("changer@example.com", NEW_PASSWORD, { cookie: `gatehouse-device=${newDevice}` })).status).toBe(200);
      const user = await gate.prisma.user.findUniqueOrThrow({ where: { email: "changer@example.com" } });
      expect((await gate.events.recent(user.id, 50)).map((event) => event.kind)).toContain("password_changed");
    });

    it("refuses a new password that breaks a rule with a 400 that says why, before any verification", async () => {
      const cookie = await signedInBrowser("rules@example.com", PASSWORD);
      checks.reset();
      const cases: [string, RegExp][] = [
        ["passwordpassword", /list of common passwords/],
        ["aaaaaaaaaaaaaaaa", /repeated/],
        ["rules@example.com!!", /email/],
        ["short", /at least 15/],
        ["sunshine2024sunshine", /patterns that attackers try early/],
        ["x".repeat(5_000) + "y".repeat(5_000), /at most 128/],
        [PASSWORD, /different/],
      ];
      for (const [newPassword, why] of cases) {
        const res = await changePassword(cookie, { currentPassword: PASSWORD, newPassword });
        expect(res.status, newPassword.slice(0, 20)).toBe(400);
        expect(await res.json()).toMatchObject({ error: "invalid_input", fields: { newPassword: expect.stringMatching(why) } });
      }
      expect(checks.verified()).toBe(0);
      expect((await browserSignIn("rules@example.com", PASSWORD)).status).toBe(200);
    });

    it("lets an account with a passkey choose 8 characters, and holds one without to 15", async () => {
      const short = "Vk7#qpZ!e2";
      const without = await signedInBrowser("rules@example.com", PASSWORD);
      const refused = await changePassword(without, { currentPassword: PASSWORD, newPassword: short });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ fields: { newPassword: expect.stringMatching(/at least 15/) } });

      const cookie = await signedInBrowser("passkeyowner@example.com", PASSWORD);
      const owner = await gate.prisma.user.findUniqueOrThrow({ where: { email: "passkeyowner@example.com" } });
      await gate.prisma.passkey.create({
        data: {
          userId: owner.id,
          credentialId: "passkey-owner-credential",
          publicKey: "pk",
          deviceType: "multiDevice",
          backedUp: true,
          name: "Laptop",
          createdAt: new Date(),
        },
      });
      expect((await changePassword(cookie, { currentPassword: PASSWORD, newPassword: "seven!!" })).status).toBe(400);
      const res = await changePassword(cookie, { currentPassword: PASSWORD, newPassword: short });
      expect(res.status).toBe(303);
      expect((await browserSignIn("passkeyowner@example.com", short)).status).toBe(200);
    });

    it("counts a wrong current password like a failed sign-in, and locks after five", async () => {
      const cookie = await signedInBrowser("guesser@example.com", PASSWORD);
      checks.reset();
      const statuses = [];
      for (let i = 0; i < 6; i++)
        statuses.push((await changePassword(cookie, { currentPassword: `wrong guess ${i}`, newPassword: NEW_PASSWORD })).status);
      expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
      expect(statuses[5]).toBe(429);
      expect(checks.verified()).toBe(5);
      // Locked for everyone untrusted: the right password waits too.
      expect((await changePassword(cookie, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD })).status).toBe(429);
    });

    it("refuses a cross-site post, a missing proof of work and a signed-out session, changing nothing", async () => {
      const cookie = await signedInBrowser("crosssite@example.com", PASSWORD);
      checks.reset();
      const crossSite = await changePassword(
        cookie,
        { currentPassword: PASSWORD, newPassword: NEW_PASSWORD },
        { "sec-fetch-site": "cross-site" },
      );
      expect(crossSite.status).toBe(403);
      const noPow = await changePassword(cookie, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD, altcha: "" });
      expect(noPow.status).toBe(400);
      expect(await noPow.json()).toMatchObject({ error: "captcha_invalid" });
      const { browserSignOut } = await import("../helpers/browser");
      await browserSignOut(cookie);
      const signedOut = await changePassword(cookie, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
      expect(signedOut.status).toBe(401);
      expect(checks.verified()).toBe(0);
      expect((await browserSignIn("crosssite@example.com", PASSWORD)).status).toBe(200);
    });
  });
}

onEachDatabase("change password", ({ label, makeDatabase }) => changePasswordSuite(label, makeDatabase));

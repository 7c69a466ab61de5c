import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { MailMessage } from "@/lib/mail/types";
import { webhookOfSecurityEvent } from "@/lib/webhooks/events";
import {
  accountFormPost,
  browserSignIn,
  createAccount,
  deviceCookieOf,
  sessionPairOf,
  sessionWith,
  signedInBrowser,
} from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { runAdminCommand } from "../helpers/instance";
import { servedForSuite } from "../helpers/served-suite";
import { pressLink, tokenIn } from "../helpers/email-links";
import { onEachDatabase } from "../helpers/each-database";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the right passphrase";
const CHANGE = "/api/account/email";

/**
 * "Change email" (issue 57, item 1) through the real routes and a real database: nothing changes
 * until the new address confirms; then it signs in and the old one does not, other sessions end;
 * the old address can undo it; an address another account has gets the same answer as a free one.
 */
export function accountEmailSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`change email on ${label}`, () => {
    const served = servedForSuite(
      makeDatabase,
      ["mover", "taken-asker", "taken-owner", "undoer", "racer", "unicode", "operator-moved"].map((name) => `${name}@example.com`),
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
    const mailTo = (to: string) => sent.filter((message) => message.to === to);
    const eventsOf = async (userId: string) => (await gate.events.recent(userId, 50)).map((event) => event.kind);

    it("moves the account only once the new address confirms: then it signs in, the old one does not, other sessions end", async () => {
      const [from, to] = ["mover@example.com", "moved@example.com"];
      const { id: userId } = await gate.prisma.user.findUniqueOrThrow({ where: { email: from } });
      const elsewhere = await signedInBrowser(from, PASSWORD);
      const here = await signedInBrowser(from, PASSWORD);

      // The sign-in's own mail (a new device's notice) goes out first, outside what is watched.
      await gate.background.idle();
      watchMail();
      const res = await accountFormPost(gate, CHANGE, here, { newEmail: ` Moved@Example.COM `, json: "true" });
      expect(res.status).toBe(202);
      expect(await res.json()).toEqual({ status: "check_new_inbox" });
      await gate.background.idle();
      expect(mailTo(to).map((message) => message.subject)).toEqual(["Confirm your new Gatehouse email address"]);
      expect(mailTo(from).map((message) => message.subject)).toEqual(["Your Gatehouse email address is being changed"]);
      const confirm = tokenIn(mailTo(to)[0], "/confirm-email-change");
      expect(tokenIn(mailTo(from)[0], "/undo-email-change")).toMatch(/.{40,}/);

      // Nothing changed yet.
      expect((await gate.prisma.user.findUniqueOrThrow({ where: { id: userId } })).email).toBe(from);
      expect(sessionPairOf(await browserSignIn(to, PASSWORD))).toBeNull();
      expect((await sessionWith(elsewhere)).body).toMatchObject({ user: { email: from } });

      const confirmed = await pressLink("/api/email-change/confirm", confirm, here);
      expect(confirmed.status).toBe(200);
      expect(await confirmed.json()).toEqual({ status: "email_changed", redirectTo: "/account?notice=email_changed" });
      // This browser asked for it: it stays signed in, its cookie now names the new address.
      const renewed = sessionPairOf(confirmed)!;
      expect((await sessionWith(renewed)).body).toMatchObject({ user: { email: to } });
      expect((await sessionWith(elsewhere)).body).toEqual({});

      expect((await gate.prisma.user.findUniqueOrThrow({ where: { id: userId } })).email).toBe(to);
      // The old name's devices cannot speak for the new one (each cookie is signed for its name):
      // this browser is the new name's known device, and passes in the owner's lane.
      expect(await gate.devices.listOf(gate.usernameKey(from), gate.clock())).toEqual([]);
      const device = deviceCookieOf(confirmed)!;
      expect(gate.devices.signed(device, gate.usernameKey(to), gate.clock())).not.toBeNull();
      expect(sessionPairOf(await browserSignIn(from, PASSWORD))).toBeNull();
      // A stranger's sign-in to the new address before the change marked it under attack: only the known device goes straight in.
      expect(sessionPairOf(await browserSignIn(to, PASSWORD, { cookie: `gatehouse-device=${device}` }))).not.toBeNull();
      expect(await eventsOf(userId)).toEqual(expect.arrayContaining(["email_change_requested", "email_changed"]));
      // The webhook names the account's id only, never an address.
      const hook = webhookOfSecurityEvent("email_changed", userId, "203.0.113.0/24", null, Date.now());
      expect(hook?.type).toBe("email.changed");
      expect(JSON.stringify(hook)).not.toContain("@");

      // The link is spent: pressed again, the one "invalid link" answer, and nothing moves.
      const replay = await pressLink("/api/email-change/confirm", confirm);
      expect(replay.status).toBe(400);
      expect(await replay.json()).toMatchObject({ error: "invalid_token" });
    });

    it("an address another account has gets the same answer; its owner is told, and nothing can be confirmed", async () => {
      const [asker, owner] = ["taken-asker@example.com", "taken-owner@example.com"];
      const here = await signedInBrowser(asker, PASSWORD);
      watchMail();
      const taken = await accountFormPost(gate, CHANGE, here, { newEmail: "Taken-Owner@example.com", json: "true" });
      const free = await accountFormPost(gate, CHANGE, here, { newEmail: "nobody-has-this@example.com", json: "true" });
      expect([taken.status, await taken.text()]).toEqual([free.status, await free.text()]);
      await gate.background.idle();
      expect(mailTo(owner).map((message) => message.subject)).toEqual(["Someone tried to use your email address"]);
      expect(mailTo(owner)[0]!.text).not.toContain(asker);
      // The old address is told alike of both; only the free address gets a link to confirm.
      expect(mailTo(asker).map((message) => message.subject)).toEqual([
        "Your Gatehouse email address is being changed",
        "Your Gatehouse email address is being changed",
      ]);
      expect(mailTo("nobody-has-this@example.com")).toHaveLength(1);
      expect(await gate.prisma.user.count({ where: { email: { in: [asker, owner] } } })).toBe(2);
    });

    it("an address registered by someone else between the request and the link: 409, nothing changes", async () => {
      const from = "racer@example.com";
      const here = await signedInBrowser(from, PASSWORD);
      watchMail();
      await accountFormPost(gate, CHANGE, here, { newEmail: "race-target@example.com", json: "true" });
      await gate.background.idle();
      const confirm = tokenIn(mailTo("race-target@example.com")[0], "/confirm-email-change");
      await createAccount(gate, "race-target@example.com", "another long passphrase");
      const res = await pressLink("/api/email-change/confirm", confirm, here);
      expect(res.status).toBe(409);
      expect(await res.json()).toMatchObject({ error: "address_taken" });
      expect(await gate.prisma.user.count({ where: { email: from } })).toBe(1);
      expect((await sessionWith(here)).body).toMatchObject({ user: { email: from } });
      // And the link is spent.
      expect((await pressLink("/api/email-change/confirm", confirm)).status).toBe(400);
    });

    it("the old address undoes a confirmed change: the address comes back, every session ends, new devices must confirm, a reset is mailed", async () => {
      const [from, to] = ["undoer@example.com", "undoer-new@example.com"];
      const { id: userId } = await gate.prisma.user.findUniqueOrThrow({ where: { email: from } });
      const here = await signedInBrowser(from, PASSWORD);
      watchMail();
      await accountFormPost(gate, CHANGE, here, { newEmail: to, json: "true" });
      await gate.background.idle();
      const undo = tokenIn(mailTo(from)[0], "/undo-email-change");
      expect((await pressLink("/api/email-change/confirm", tokenIn(mailTo(to)[0], "/confirm-email-change"))).status).toBe(200);
      // Whoever moved it resets the password through the new address: the old address's undo link survives.
      await gate.emailTokens.revokeAll(userId);
      const intruder = await signedInBrowser(to, PASSWORD);

      sent = [];
      const res = await pressLink("/api/email-change/undo", undo);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: "email_change_undone", email: from });
      expect((await gate.prisma.user.findUniqueOrThrow({ where: { id: userId } })).email).toBe(from);
      for (const cookie of [here, intruder]) expect((await sessionWith(cookie)).body).toEqual({});
      expect(await gate.devices.listOf(gate.usernameKey(from), gate.clock())).toEqual([]);
      const lockout = await gate.prisma.signInLockout.findUniqueOrThrow({ where: { usernameKey: gate.usernameKey(from) } });
      expect(lockout.lastFailedAt).not.toBeNull();
      await gate.background.idle();
      expect(mailTo(from).map((message) => message.subject)).toContain("Reset your Gatehouse password");
      expect(await eventsOf(userId)).toContain("email_change_undone");
      // Single use.
      expect((await pressLink("/api/email-change/undo", undo)).status).toBe(400);
    });

    it("normalises the new address as every stored one (case, spaces, Unicode compatibility forms)", async () => {
      const here = await signedInBrowser("unicode@example.com", PASSWORD);
      watchMail();
      // Fullwidth letters are their ASCII selves after NFKC.
      expect((await accountFormPost(gate, CHANGE, here, { newEmail: " ＵＮＩ@Example.com ", json: "true" })).status).toBe(202);
      await gate.background.idle();
      expect(sent.map((message) => message.to)).toContain("uni@example.com");
      for (const newEmail of ["", "not an address", "a@b", "x".repeat(400) + "@example.com", "unicode@example.com"]) {
        const res = await accountFormPost(gate, CHANGE, here, { newEmail, json: "true" });
        expect(res.status, newEmail).toBe(400);
        expect(await res.json()).toMatchObject({ error: "invalid_input", fields: { newEmail: expect.any(String) } });
      }
    });

    it("the operator moves an account at once: npm run admin -- change-email <old> <new>", async () => {
      const [from, to] = ["operator-moved@example.com", "operator-target@example.com"];
      const here = await signedInBrowser(from, PASSWORD);
      const { id: userId } = await gate.prisma.user.findUniqueOrThrow({ where: { email: from } });
      expect(await runAdminCommand(gate, "change-email", from, "Operator-Target@example.com")).toMatch(
        /Moved operator-moved@example.com to operator-target@example.com/,
      );
      expect((await gate.prisma.user.findUniqueOrThrow({ where: { id: userId } })).email).toBe(to);
      expect((await sessionWith(here)).body).toEqual({});
      expect(await eventsOf(userId)).toContain("admin_email_changed");
      await expect(runAdminCommand(gate, "change-email", to, "taken-owner@example.com")).rejects.toThrow(/Another account/);
    });

    it('"Don\'t ask again" on the passkey invitation is stored on the account, once, behind the form token', async () => {
      const email = "taken-asker@example.com";
      const here = await signedInBrowser(email, PASSWORD);
      const dismissed = async () => (await gate.prisma.user.findUniqueOrThrow({ where: { email } })).passkeyInviteDismissedAt;
      expect(await dismissed()).toBeNull();
      expect((await accountFormPost(gate, "/api/account/passkey-invite/dismiss", here, { formToken: "forged" })).status).toBe(403);
      expect(await dismissed()).toBeNull();
      const res = await accountFormPost(gate, "/api/account/passkey-invite/dismiss", here, {});
      expect(res.headers.get("location")).toBe("/account?notice=passkey_invite_dismissed");
      const at = await dismissed();
      expect(at).not.toBeNull();
      expect((await accountFormPost(gate, "/api/account/passkey-invite/dismiss", here, { json: "true" })).status).toBe(200);
      expect(await dismissed()).toEqual(at);
    });
  });
}

onEachDatabase("change email", ({ label, makeDatabase }) => accountEmailSuite(label, makeDatabase));

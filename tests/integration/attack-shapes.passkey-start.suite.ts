import { NextRequest } from "next/server";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { MailMessage } from "@/lib/mail/types";
import { REGISTRATION_ACCEPTED } from "@/lib/auth/email-request";
import {
  accountFormPost,
  altchaPayload,
  browserSignIn,
  comparableAnswer,
  deviceCookieOf,
  sessionPairOf,
  sessionWith,
  signedInBrowser,
} from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { servedForSuite } from "../helpers/served-suite";
import { tokenIn } from "../helpers/email-links";
import { freshAddress, PEER_HEADER } from "../helpers/peer";
import { softAuthenticator } from "../helpers/webauthn";
import { onEachDatabase } from "../helpers/each-database";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the right passphrase";
const ORIGIN = "http://localhost:3000";
const NEW_PASSWORD = "a brand new passphrase of mine";

/**
 * "Create an account with a passkey" (issue 57, item 6; decision 39) through the real route
 * handlers and a real database: the address only, the emailed link's page makes the passkey, no
 * password is ever set; "Set a password" later; recovery by the mailbox and a new passkey. Then
 * the attack shapes: a taken or malformed address, a replayed, stale or raced link, a foreign
 * session, a password tried at an account that has none, a missing fresh authentication.
 */
export function passkeyStartSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`start with a passkey on ${label}`, () => {
    const served = servedForSuite(makeDatabase, ["taken@example.com", "intruder@example.com"], PASSWORD);
    let gate: Gate;
    let sent: MailMessage[];
    const authenticator = softAuthenticator({ origin: ORIGIN });
    beforeAll(() => {
      gate = served.gate;
    });
    afterEach(() => vi.restoreAllMocks());

    function watchMail() {
      sent = [];
      vi.spyOn(gate.mailer, "send").mockImplementation((message: MailMessage) => void sent.push(message));
    }
    const mailTo = async (to: string) => {
      await gate.background.idle();
      return sent.filter((message) => message.to === to);
    };
    const userOf = (email: string) => gate.prisma.user.findUnique({ where: { email } });
    const passkeysOf = async (email: string) => gate.prisma.passkey.count({ where: { user: { email } } });

    async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
      const route = (await import(`@/app${path}/route`)) as { POST: (request: NextRequest) => Promise<Response> };
      return route.POST(
        new NextRequest(`http://localhost${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", "sec-fetch-site": "same-origin", [PEER_HEADER]: freshAddress(), ...headers },
          body: typeof body === "string" ? body : JSON.stringify(body),
        }),
      );
    }

    /** A passkey sign-in with `passkey`, through the sign-in page's routes. */
    async function passkeySignIn(passkey: Parameters<typeof authenticator.authenticate>[0]) {
      const { POST: signInOptions } = await import("@/app/api/auth/passkey/options/route");
      const optionsRes = await signInOptions(
        new Request("http://localhost/api/auth/passkey/options", {
          method: "POST",
          headers: { [PEER_HEADER]: freshAddress(), "sec-fetch-site": "same-origin" },
        }),
      );
      const { options } = (await optionsRes.json()) as { options: Parameters<typeof authenticator.authenticate>[1] };
      return post("/api/auth/passkey", { credential: await authenticator.authenticate(passkey, options) });
    }
    const start = async (email: string) => post("/api/register/passkey", { email, altcha: await altchaPayload() });

    /** The link the last mail to `email` carries to the passkey page. */
    async function linkFor(email: string): Promise<string> {
      const token = tokenIn((await mailTo(email)).at(-1), "/new-passkey");
      expect(token).not.toBe("");
      return token;
    }

    /** The authenticator's answer to the link's own registration challenge. */
    async function madeWith(token: string) {
      const res = await post("/api/new-passkey/options", { token });
      expect(res.status).toBe(200);
      const { options } = (await res.json()) as { options: Parameters<typeof authenticator.register>[0] };
      return authenticator.register(options);
    }
    const finish = (token: string, credential: unknown, cookie = "") =>
      post("/api/new-passkey", { token, credential }, cookie ? { cookie } : {});

    /** A new passkey-only account, signed in from its link: its session cookie and passkey. */
    async function passkeyAccount(email: string) {
      watchMail();
      expect((await start(email)).status).toBe(202);
      const made = await madeWith(await linkFor(email));
      const res = await finish(await linkFor(email), made.response);
      expect(res.status).toBe(200);
      return { cookie: sessionPairOf(res)!, passkey: made.passkey };
    }

    describe("the flow", () => {
      it("confirms the address and makes the passkey from the emailed link; no password is ever set", async () => {
        watchMail();
        const res = await start(" New.Owner@Example.com ");
        expect(res.status).toBe(202);
        expect(await res.json()).toEqual(REGISTRATION_ACCEPTED);
        // Until the link's page has made a passkey: an account with no password, not confirmed, no way in.
        expect(await userOf("new.owner@example.com")).toMatchObject({ passwordHash: null, emailVerifiedAt: null });
        const [mail] = await mailTo("new.owner@example.com");
        expect(mail?.kind).toBe("passkey_start");
        const token = tokenIn(mail, "/new-passkey");

        const made = await madeWith(token);
        const done = await finish(token, made.response);
        expect(done.status).toBe(200);
        expect(await done.json()).toMatchObject({ status: "passkey_created", url: "/account" });
        const session = sessionPairOf(done)!;
        expect((await sessionWith(session)).body).toMatchObject({ user: { email: "new.owner@example.com" } });
        const user = await userOf("new.owner@example.com");
        expect(user?.passwordHash).toBeNull();
        expect(user?.emailVerifiedAt).not.toBeNull();
        expect(await passkeysOf("new.owner@example.com")).toBe(1);

        // The passkey signs in on its own afterwards.
        expect((await passkeySignIn(made.passkey)).status).toBe(200);
      });

      it("lets the owner set a password later, under the password rules; then the password signs in", async () => {
        const { cookie } = await passkeyAccount("sets-later@example.com");
        const weak = await accountFormPost(gate, "/api/account/password/set", cookie, { newPassword: "short" });
        expect(weak.status).toBe(400);
        expect((await userOf("sets-later@example.com"))?.passwordHash).toBeNull();

        const set = await accountFormPost(gate, "/api/account/password/set", cookie, { newPassword: NEW_PASSWORD });
        expect(set.status).toBe(303);
        expect(set.headers.get("location")).toBe("/account?notice=password_set");
        expect((await browserSignIn("sets-later@example.com", NEW_PASSWORD)).status).toBe(200);
        // Once set, it is changed with the current one: this form refuses.
        const renewed = sessionPairOf(set)!;
        const again = await accountFormPost(gate, "/api/account/password/set", renewed, { newPassword: `${NEW_PASSWORD} again` });
        expect(again.status).toBe(409);
        expect(await again.json()).toMatchObject({ error: "password_exists" });
      });

      it("recovers by the mailbox and a new passkey: forgot-password mails the passkey link, other sessions end", async () => {
        const { cookie } = await passkeyAccount("recovers@example.com");
        watchMail();
        const forgot = await post("/api/password/forgot", { email: "recovers@example.com", altcha: await altchaPayload() });
        expect(forgot.status).toBe(202);
        const [mail] = await mailTo("recovers@example.com");
        expect(mail?.kind).toBe("passkey_recovery");
        expect(mail?.links.some((link) => link.url.includes("/reset-password"))).toBe(false);
        const token = tokenIn(mail, "/new-passkey");
        const made = await madeWith(token);
        const done = await finish(token, made.response);
        expect(done.status).toBe(200);
        // The made passkey is the account's only one now (the lost one went with the recovery).
        expect(await passkeysOf("recovers@example.com")).toBe(1);
        expect((await sessionWith(cookie)).body).toEqual({});
        expect((await userOf("recovers@example.com"))?.passwordHash).toBeNull();
      });
    });

    describe("attack shapes", () => {
      it("a stolen authenticator signs in no more once the owner recovers with the mailbox (issue 57, item 6)", async () => {
        const email = "stolen-key@example.com";
        const { cookie, passkey: stolen } = await passkeyAccount(email);
        // The authenticator the owner then loses (or has stolen) signs in before the recovery.
        const before = await passkeySignIn(stolen);
        expect(before.status).toBe(200);
        // Its browser became a known device of the account (the owner's lane).
        const thiefDevice = deviceCookieOf(before)!;
        const known = () => gate.devices.recognise(thiefDevice, gate.usernameKey(email), Date.now());
        expect(await known()).not.toBeNull();

        watchMail();
        expect((await post("/api/password/forgot", { email, altcha: await altchaPayload() })).status).toBe(202);
        // (The new-sign-in notice of the passkey's sign-in above may land in between.)
        const mail = (await mailTo(email)).find((message) => message.kind === "passkey_recovery");
        // The owner is told before pressing the button what the link does to the other passkeys.
        expect(mail?.text).toMatch(/removes every other passkey/);
        const token = tokenIn(mail, "/new-passkey");
        const made = await madeWith(token);
        expect((await finish(token, made.response)).status).toBe(200);

        // The thief's key: refused, and no session of its is left.
        const thief = await passkeySignIn(stolen);
        expect(thief.status).not.toBe(200);
        expect(sessionPairOf(thief)).toBeNull();
        expect((await sessionWith(cookie)).body).toEqual({});
        // Nor does its browser keep the owner's lane, as after a password reset.
        expect(await known()).toBeNull();
        // The owner's new one signs in.
        expect((await passkeySignIn(made.passkey)).status).toBe(200);
        const events = await gate.prisma.securityEvent.findMany({ where: { user: { email } }, select: { kind: true } });
        expect(events.map((event) => event.kind)).toContain("passkeys_removed_by_recovery");
      });

      it("an address that has an account is answered as a free one; its owner is told, nothing changes", async () => {
        const before = await userOf("taken@example.com");
        watchMail();
        const free = await start("free-address@example.com");
        const taken = await start("taken@example.com");
        expect(taken.status).toBe(free.status);
        expect(await taken.json()).toEqual(await free.json());
        const mails = await mailTo("taken@example.com");
        expect(mails.map((mail) => mail.kind)).toEqual(["address_taken"]);
        expect(mails[0]!.links.some((link) => link.url.includes("/new-passkey"))).toBe(false);
        expect(await userOf("taken@example.com")).toEqual(before);
      });

      it("a malformed address gets a clear 400 and makes no account", async () => {
        for (const email of ["not an address", "a@", "x".repeat(400) + "@example.com"]) {
          const res = await start(email);
          expect(res.status).toBe(400);
          expect(await res.json()).toMatchObject({ error: "invalid_input" });
        }
        const malformed = await post("/api/register/passkey", "{not json");
        expect(malformed.status).toBe(400);
        expect(await gate.prisma.user.count({ where: { email: { contains: "not an address" } } })).toBe(0);
      });

      it("a replayed link makes nothing the second time", async () => {
        watchMail();
        await start("replayed@example.com");
        const token = await linkFor("replayed@example.com");
        const first = await madeWith(token);
        expect((await finish(token, first.response)).status).toBe(200);
        const replay = await finish(token, first.response);
        expect(replay.status).toBe(400);
        expect(await replay.json()).toMatchObject({ error: "invalid_token" });
        expect((await post("/api/new-passkey/options", { token })).status).toBe(400);
        expect(await passkeysOf("replayed@example.com")).toBe(1);
      });

      it("a parallel double-submit makes one passkey and one session", async () => {
        watchMail();
        await start("doubled@example.com");
        const token = await linkFor("doubled@example.com");
        const [a, b] = [await madeWith(token), await madeWith(token)];
        const answers = await Promise.all([finish(token, a.response), finish(token, b.response)]);
        expect(answers.map((res) => res.status).sort()).toEqual([200, 400]);
        expect(await passkeysOf("doubled@example.com")).toBe(1);
      });

      it("a stale link gets a clear 400 and confirms nothing", async () => {
        watchMail();
        await start("stale@example.com");
        const token = await linkFor("stale@example.com");
        const made = await madeWith(token);
        vi.spyOn(gate, "clock").mockReturnValue(Date.now() + gate.config.email.verifyLinkLifetimeMs + 60_000);
        const res = await finish(token, made.response);
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ error: "invalid_token" });
        expect(await userOf("stale@example.com")).toMatchObject({ emailVerifiedAt: null });
        expect(await passkeysOf("stale@example.com")).toBe(0);
      });

      it("a link used from another account's session gives the passkey to the link's account only", async () => {
        const intruder = await signedInBrowser("intruder@example.com", PASSWORD);
        watchMail();
        await start("foreign@example.com");
        const token = await linkFor("foreign@example.com");
        const made = await madeWith(token);
        const res = await finish(token, made.response, intruder);
        expect(res.status).toBe(200);
        expect(await passkeysOf("foreign@example.com")).toBe(1);
        expect(await passkeysOf("intruder@example.com")).toBe(0);
        // And a foreign site cannot make a browser do it (login CSRF).
        watchMail();
        await start("cross-site@example.com");
        const other = await linkFor("cross-site@example.com");
        const crossSite = await post(
          "/api/new-passkey",
          { token: other, credential: (await madeWith(other)).response },
          { "sec-fetch-site": "cross-site", origin: "https://evil.example" },
        );
        expect(crossSite.status).toBe(403);
        expect(await passkeysOf("cross-site@example.com")).toBe(0);
      });

      it("a password at an account with none is answered as a wrong password, and counted as one", async () => {
        await passkeyAccount("no-password@example.com");
        const none = await browserSignIn("no-password@example.com", PASSWORD);
        const wrong = await browserSignIn("taken@example.com", "not the right passphrase");
        expect(none.status).toBe(wrong.status);
        expect(comparableAnswer(await none.json())).toEqual(comparableAnswer(await wrong.json()));
        const key = gate.usernameKey("no-password@example.com");
        const lock = await gate.prisma.signInLockout.findMany({ where: { usernameKey: key } });
        expect(lock.length).toBeGreaterThan(0);
      });

      it("setting a password without a fresh authentication sets nothing", async () => {
        const { cookie } = await passkeyAccount("stale-set@example.com");
        vi.spyOn(gate, "clock").mockReturnValue(Date.now() + 11 * 60_000);
        const res = await accountFormPost(gate, "/api/account/password/set", cookie, { newPassword: NEW_PASSWORD });
        expect(res.status).toBe(401);
        expect(await res.json()).toMatchObject({ error: "reauthentication_required" });
        expect((await userOf("stale-set@example.com"))?.passwordHash).toBeNull();
      });

      it("the mailbox does not stand in for an authenticator app the owner turned on", async () => {
        await passkeyAccount("has-app@example.com");
        const user = (await userOf("has-app@example.com"))!;
        await gate.prisma.totpFactor.create({
          data: { userId: user.id, secretSealed: "sealed", createdAt: new Date(), enabledAt: new Date() },
        });
        watchMail();
        await post("/api/password/forgot", { email: "has-app@example.com", altcha: await altchaPayload() });
        const token = await linkFor("has-app@example.com");
        const res = await finish(token, (await madeWith(token)).response);
        expect(res.status).toBe(403);
        expect(await res.json()).toMatchObject({ error: "factor_required" });
        expect(await passkeysOf("has-app@example.com")).toBe(1);
      });

      it("keeps the last passkey of an account with no password, also against two removals racing", async () => {
        const { cookie } = await passkeyAccount("keeps-last@example.com");
        const [only] = await gate.prisma.passkey.findMany({ where: { user: { email: "keeps-last@example.com" } } });
        const remove = (id: string) => accountFormPost(gate, "/api/account/passkeys/remove", cookie, { id, json: "true" });
        const refused = await remove(only!.id);
        expect(refused.status).toBe(409);
        expect(await refused.json()).toMatchObject({ error: "last_credential" });
        expect(await passkeysOf("keeps-last@example.com")).toBe(1);
        // A second passkey, then both removed at once: one of them stays.
        const { userId, publicKey, transports, deviceType, backedUp, createdAt, credentialId } = only!;
        const copied = { userId, publicKey, transports, deviceType, backedUp, createdAt };
        const second = await gate.prisma.passkey.create({ data: { ...copied, credentialId: `${credentialId}-2`, name: "Second" } });
        const raced = await Promise.all([remove(only!.id), remove(second.id)]);
        expect(raced.map((res) => res.status).sort()).toEqual([200, 409]);
        expect(await passkeysOf("keeps-last@example.com")).toBe(1);
      });

      it("a passkey link dies once the account has a password", async () => {
        const { cookie } = await passkeyAccount("then-password@example.com");
        watchMail();
        await post("/api/password/forgot", { email: "then-password@example.com", altcha: await altchaPayload() });
        const token = await linkFor("then-password@example.com");
        expect((await accountFormPost(gate, "/api/account/password/set", cookie, { newPassword: NEW_PASSWORD })).status).toBe(303);
        const res = await post("/api/new-passkey/options", { token });
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ error: "invalid_token" });
      });
    });
  });
}

onEachDatabase("start with a passkey", ({ label, makeDatabase }) => passkeyStartSuite(label, makeDatabase));

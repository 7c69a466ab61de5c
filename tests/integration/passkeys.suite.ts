import { NextRequest } from "next/server";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import {
  accountFormPost,
  createAccount,
  deviceCookieOf,
  resetByLink,
  sessionIdOf,
  sessionPairOf,
  sessionWith,
  signedInBrowser,
  tokenSignIn,
} from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse, testGatehouse } from "../helpers/instance";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";
import { watchPasswordChecks } from "../helpers/verifications";
import { softAuthenticator, type SoftPasskey } from "../helpers/webauthn";
import { onEachDatabase } from "../helpers/each-database";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the right passphrase";
const ORIGIN = "http://localhost:3000";

/**
 * Passkeys through the real route handlers and a real database, with a software authenticator
 * that signs what a browser's would: add one from the account page, sign in with it alone (also
 * while strangers hold the account locked), and every shape that must fail: a replayed, expired,
 * raced or foreign challenge, another origin or RP ID, a counter gone backwards, a removed key,
 * another account's key, a stale session, malformed input.
 */
export function passkeysSuite(label: string, makeDatabase: () => Promise<TestDatabase>, options: { shared?: boolean } = {}) {
  describe(`passkeys on ${label}`, () => {
    let database: TestDatabase;
    let gate: Gate;
    const authenticator = softAuthenticator({ origin: ORIGIN });

    beforeAll(async () => {
      announcePeerHeader();
      database = await makeDatabase();
      gate = await servedGatehouse(database.url, options.shared ? { RATE_LIMIT_STORE: "postgres" } : {});
    });

    afterEach(() => vi.restoreAllMocks());

    afterAll(async () => {
      await closeServed(gate);
      await database?.dispose();
    });

    const sidOf = (cookie: string) => sessionIdOf(gate, cookie);
    /** A post from the account page (same origin, the session's form token). */
    const accountPost = (path: string, cookie: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
      accountFormPost(gate, path, cookie, fields, headers);

    async function signInOptions() {
      const { POST } = await import("@/app/api/auth/passkey/options/route");
      const res = await POST(
        new Request("http://localhost/api/auth/passkey/options", {
          method: "POST",
          headers: { [PEER_HEADER]: freshAddress(), "sec-fetch-site": "same-origin" },
        }),
      );
      expect(res.status).toBe(200);
      return ((await res.json()) as { options: Parameters<typeof authenticator.authenticate>[1] }).options;
    }

    async function passkeySignIn(credential: unknown, headers: Record<string, string> = {}, body?: string) {
      const { POST } = await import("@/app/api/auth/passkey/route");
      return POST(
        new NextRequest("http://localhost/api/auth/passkey", {
          method: "POST",
          headers: { "content-type": "application/json", "sec-fetch-site": "same-origin", [PEER_HEADER]: freshAddress(), ...headers },
          body: body ?? JSON.stringify({ credential, callbackUrl: "/account" }),
        }),
      );
    }

    /** A new account with one passkey, added from a freshly signed-in browser. */
    async function ownerWithPasskey(email: string, auth = authenticator): Promise<{ cookie: string; passkey: SoftPasskey }> {
      await createAccount(gate, email, PASSWORD);
      const cookie = await signedInBrowser(email, PASSWORD);
      const optionsRes = await accountPost("/api/account/passkeys/options", cookie, { purpose: "register" });
      expect(optionsRes.status).toBe(200);
      const { options } = (await optionsRes.json()) as { options: Parameters<typeof auth.register>[0] };
      const { response, passkey } = await auth.register(options);
      const added = await accountPost("/api/account/passkeys", cookie, { credential: JSON.stringify(response) });
      expect(added.status, await added.clone().text()).toBe(200);
      return { cookie, passkey };
    }

    const userIdOf = async (email: string) => (await gate.prisma.user.findUniqueOrThrow({ where: { email } })).id;
    const kindsOf = async (email: string) => (await gate.events.recent(await userIdOf(email), 50)).map((event) => event.kind);

    it("adds a passkey, then signs in with it alone: a session and a known device, no Argon2id, no hash-budget slot", async () => {
      const { passkey } = await ownerWithPasskey("alone@example.com");
      expect(await kindsOf("alone@example.com")).toContain("passkey_added");
      const checks = await watchPasswordChecks(gate);
      const budget = vi.spyOn(gate.hashBudget, "run");
      const res = await passkeySignIn(await authenticator.authenticate(passkey, await signInOptions()));
      expect(res.status, await res.clone().text()).toBe(200);
      expect(await res.json()).toEqual({ url: `${ORIGIN}/account` });
      const cookie = sessionPairOf(res)!;
      expect((await sessionWith(cookie)).body).toMatchObject({ user: { email: "alone@example.com" } });
      expect(deviceCookieOf(res)).not.toBeNull();
      expect(checks.verified()).toBe(0);
      expect(budget).not.toHaveBeenCalled();
      const listed = await gate.passkeys.list(await userIdOf("alone@example.com"));
      expect(listed).toHaveLength(1);
      expect(listed[0]!.lastUsedAt).not.toBeNull();
    });

    it("sends an owner whose password is marked breached straight to choose a new one, whatever the callback", async () => {
      const { passkey } = await ownerWithPasskey("breached-pk@example.com");
      await gate.prisma.user.update({ where: { email: "breached-pk@example.com" }, data: { passwordBreachedAt: new Date() } });
      const res = await passkeySignIn(await authenticator.authenticate(passkey, await signInOptions()));
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ url: `${ORIGIN}/account/new-password` });
      expect(sessionPairOf(res)).not.toBeNull();
    });

    it("signs the owner in while strangers hold the account locked, and the lock still holds for them", async () => {
      const { passkey } = await ownerWithPasskey("besieged@example.com");
      for (let i = 0; i < 5; i++) await tokenSignIn("besieged@example.com", "a stranger's guess");
      expect((await gate.lockouts.check(gate.usernameKey("besieged@example.com"), Date.now(), gate.config.lockout)).locked).toBe(true);
      const res = await passkeySignIn(await authenticator.authenticate(passkey, await signInOptions()));
      expect(res.status).toBe(200);
      expect(sessionPairOf(res)).not.toBeNull();
      expect((await tokenSignIn("besieged@example.com", PASSWORD)).status).toBe(429);
    });

    it("spends each challenge once: a replayed assertion, or a second answer to one challenge, is refused", async () => {
      const { passkey } = await ownerWithPasskey("replay@example.com");
      const options = await signInOptions();
      const assertion = await authenticator.authenticate(passkey, options);
      expect((await passkeySignIn(assertion)).status).toBe(200);
      const replayed = await passkeySignIn(assertion);
      expect(replayed.status).toBe(400);
      expect(await replayed.json()).toMatchObject({ error: "passkey_invalid", reason: "replayed" });
      const again = await passkeySignIn(await authenticator.authenticate(passkey, options));
      expect(await again.json()).toMatchObject({ reason: "replayed" });
      expect(sessionPairOf(again)).toBeNull();
    });

    it("refuses an expired challenge and one we did not sign", async () => {
      const { passkey } = await ownerWithPasskey("expired@example.com");
      const options = await signInOptions();
      vi.spyOn(gate, "clock").mockReturnValue(Date.now() + 6 * 60_000);
      expect(await (await passkeySignIn(await authenticator.authenticate(passkey, options))).json()).toMatchObject({ reason: "expired" });
      vi.restoreAllMocks();
      const forged = Buffer.from(`${"A".repeat(43)}.${Date.now() + 60_000}.forged`).toString("base64url");
      const res = await passkeySignIn(await authenticator.authenticate(passkey, { ...options, challenge: forged }));
      expect(await res.json()).toMatchObject({ reason: "forged" });
    });

    it("refuses an assertion made on another origin or for another RP ID, or without user verification", async () => {
      const { passkey } = await ownerWithPasskey("phished@example.com");
      for (const overrides of [{ origin: "https://gatehouse.evil.example" }, { rpId: "evil.example" }, { userVerified: false }]) {
        const res = await passkeySignIn(await authenticator.authenticate(passkey, await signInOptions(), overrides));
        expect(res.status, JSON.stringify(overrides)).toBe(400);
        expect(await res.json()).toMatchObject({ error: "passkey_invalid" });
        expect(sessionPairOf(res)).toBeNull();
      }
    });

    // Issue 59: an assertion an iframe of another site asked for, and one whose user handle names
    // another account, were accepted (the account came from the credential id alone).
    it("refuses an assertion made in a cross-origin iframe, and one whose user handle is not its passkey's account", async () => {
      const { passkey } = await ownerWithPasskey("framed@example.com");
      const other = Buffer.from(new TextEncoder().encode(await createAccount(gate, "framed-other@example.com", PASSWORD))).toString(
        "base64url",
      );
      for (const overrides of [{ crossOrigin: true }, { userHandle: other }]) {
        const res = await passkeySignIn(await authenticator.authenticate(passkey, await signInOptions(), overrides));
        expect(res.status, JSON.stringify(overrides)).toBe(400);
        expect(await res.json()).toMatchObject({ error: "passkey_invalid" });
        expect(sessionPairOf(res)).toBeNull();
      }
      // Its own handle, and none at all (a non-discoverable answer), still sign in.
      for (const overrides of [{}, { userHandle: null }]) {
        const res = await passkeySignIn(await authenticator.authenticate(passkey, await signInOptions(), overrides));
        expect(res.status, JSON.stringify(overrides)).toBe(200);
      }
    });

    it("refuses a signature counter that went backwards, records it and tells the owner; a synced passkey (always 0) passes", async () => {
      const { passkey } = await ownerWithPasskey("cloned@example.com");
      expect((await passkeySignIn(await authenticator.authenticate(passkey, await signInOptions()))).status).toBe(200);
      expect((await passkeySignIn(await authenticator.authenticate(passkey, await signInOptions()))).status).toBe(200);
      const notice = vi.spyOn(gate.recovery, "notice");
      const copy = await passkeySignIn(await authenticator.authenticate(passkey, await signInOptions(), { counter: 1 }));
      expect(copy.status).toBe(400);
      expect(await copy.json()).toMatchObject({ reason: "regressed" });
      expect(sessionPairOf(copy)).toBeNull();
      expect(await kindsOf("cloned@example.com")).toContain("passkey_counter_regressed");
      expect(notice).toHaveBeenCalledWith("passkey_counter_regressed", expect.anything(), expect.anything());

      const synced = softAuthenticator({ origin: ORIGIN, synced: true });
      const { passkey: syncedKey } = await ownerWithPasskey("synced@example.com", synced);
      for (let i = 0; i < 2; i++)
        expect((await passkeySignIn(await synced.authenticate(syncedKey, await signInOptions()))).status).toBe(200);
    });

    it("a removed passkey no longer signs in; removing needs a fresh authentication, which a passkey of this account gives", async () => {
      const { cookie, passkey } = await ownerWithPasskey("removed@example.com");
      const id = (await gate.passkeys.list(await userIdOf("removed@example.com")))[0]!.id;
      // Eleven minutes after the sign-in: this browser must prove itself again first.
      const later = Date.now() + 11 * 60_000;
      vi.spyOn(gate, "clock").mockReturnValue(later);
      const stale = await accountPost("/api/account/passkeys/remove", cookie, { id, json: "true" });
      expect(stale.status).toBe(401);
      expect(await stale.json()).toMatchObject({ error: "reauthentication_required" });
      expect((await accountPost("/api/account/passkeys/remove", cookie, { id })).headers.get("location")).toBe(
        "/account?notice=confirm_first",
      );
      const options = await accountPost("/api/account/passkeys/options", cookie, { purpose: "reauthenticate" });
      const proof = await authenticator.authenticate(passkey, ((await options.json()) as { options: never }).options);
      expect((await accountPost("/api/account/reauthenticate/passkey", cookie, { credential: JSON.stringify(proof) })).status).toBe(200);
      const removed = await accountPost("/api/account/passkeys/remove", cookie, { id, json: "true" });
      expect(removed.status).toBe(200);
      vi.restoreAllMocks();
      expect(await kindsOf("removed@example.com")).toContain("passkey_removed");
      const res = await passkeySignIn(await authenticator.authenticate(passkey, await signInOptions()));
      expect(await res.json()).toMatchObject({ error: "passkey_invalid", reason: "unknown" });
    });

    it("adding needs a fresh authentication too, and another account's passkey gives none", async () => {
      const { passkey: strangersKey } = await ownerWithPasskey("stranger-key@example.com");
      await createAccount(gate, "stale@example.com", PASSWORD);
      const cookie = await signedInBrowser("stale@example.com", PASSWORD);
      vi.spyOn(gate, "clock").mockReturnValue(Date.now() + 11 * 60_000);
      const stale = await accountPost("/api/account/passkeys/options", cookie, { purpose: "register" });
      expect(await stale.json()).toMatchObject({ error: "reauthentication_required" });
      // This account has no passkey; a challenge of its session, answered with another account's key, proves nothing.
      expect((await accountPost("/api/account/passkeys/options", cookie, { purpose: "reauthenticate" })).status).toBe(400);
      const foreignProof = await authenticator.authenticate(strangersKey, await signInOptions());
      const refused = await accountPost("/api/account/reauthenticate/passkey", cookie, { credential: JSON.stringify(foreignProof) });
      expect(await refused.json()).toMatchObject({ reason: "unknown" });
      // The password, asked again through the sign-in corridor, does.
      const { altchaPayload } = await import("../helpers/browser");
      const confirmed = await accountPost("/api/account/reauthenticate", cookie, {
        password: PASSWORD,
        altcha: await altchaPayload(),
        json: "true",
      });
      expect(confirmed.status, await confirmed.clone().text()).toBe(200);
      expect((await accountPost("/api/account/passkeys/options", cookie, { purpose: "register" })).status).toBe(200);
    });

    it("answers malformed input with a clear 4xx, never a 500", async () => {
      const { cookie } = await ownerWithPasskey("garbage@example.com");
      const shapes: [unknown, string | undefined][] = [
        [null, undefined],
        [{ id: "x" }, undefined],
        [
          {
            id: "A",
            rawId: "A",
            type: "public-key",
            response: { clientDataJSON: "!!", authenticatorData: "", signature: "" },
            clientExtensionResults: {},
          },
          undefined,
        ],
        [undefined, "{not json"],
        [undefined, JSON.stringify({ credential: { id: "a".repeat(9_000) } })],
      ];
      for (const [credential, body] of shapes) {
        const res = await passkeySignIn(credential, {}, body);
        expect(res.status, String(body)).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        expect((await res.json()) as object).toHaveProperty("error");
      }
      const wrongType = await passkeySignIn({}, { "content-type": "application/x-www-form-urlencoded" }, "credential=x");
      expect(wrongType.status).toBe(415);
      const crossSite = await passkeySignIn({}, { "sec-fetch-site": "cross-site" });
      expect(crossSite.status).toBe(403);
      for (const fields of [{ credential: "{" }, { credential: JSON.stringify({ id: "a" }) }])
        expect((await accountPost("/api/account/passkeys", cookie, fields)).status).toBe(400);
      for (const id of ["not-a-uuid", "00000000-0000-0000-0000-000000000000"])
        expect((await accountPost("/api/account/passkeys/rename", cookie, { id, name: "Work laptop" })).status).toBe(404);
      expect((await accountPost("/api/account/passkeys/rename", cookie, { id: "x", name: " " })).status).toBe(400);
    });

    // An attacker's review of this suite's routes found these shapes; each test failed before its fix.
    describe("what a reviewer's attacks showed", () => {
      it("a password reset can take every passkey with it, so a key an intruder added does not outlive the reset", async () => {
        const { passkey: intrudersKey } = await ownerWithPasskey("persist@example.com");
        const id = await userIdOf("persist@example.com");
        const reset = (removePasskeys?: boolean) =>
          resetByLink(gate, id, `a brand new long passphrase ${Math.random()}`, removePasskeys === undefined ? {} : { removePasskeys });
        // Without the box ticked the passkeys stay (the owner's own are not taken by a forgotten password) ...
        expect((await reset()).status).toBe(200);
        expect((await passkeySignIn(await authenticator.authenticate(intrudersKey, await signInOptions()))).status).toBe(200);
        // ... with it, every passkey goes, and the intruder's key signs in no more.
        expect((await reset(true)).status).toBe(200);
        const back = await passkeySignIn(await authenticator.authenticate(intrudersKey, await signInOptions()));
        expect(sessionPairOf(back)).toBeNull();
        expect(await back.json()).toMatchObject({ reason: "unknown" });
        expect(await kindsOf("persist@example.com")).toContain("passkeys_removed_by_reset");
      });

      it("a passkey sign-in whose key was found before sign out everywhere else gets no session", async () => {
        const { cookie: owner, passkey: key } = await ownerWithPasskey("outrun@example.com");
        const credential = await authenticator.authenticate(key, await signInOptions());
        // The owner signs out everywhere else while the assertion is being checked: after the
        // key was found, before the account is read for the session.
        const recordUse = gate.passkeys.recordUse.bind(gate.passkeys);
        vi.spyOn(gate.passkeys, "recordUse").mockImplementationOnce(async (...args) => {
          const res = await accountPost("/api/account/sessions/revoke-others", owner, {});
          expect(res.headers.get("location")).toBe("/account?notice=signed_out_everywhere_else");
          return recordUse(...args);
        });
        const res = await passkeySignIn(credential);
        expect(sessionPairOf(res)).toBeNull();
        expect(deviceCookieOf(res)).toBeNull();
        expect(await res.json()).toMatchObject({ error: "passkey_invalid" });
        // The race is closed, not the key: it signs in again.
        expect((await passkeySignIn(await authenticator.authenticate(key, await signInOptions()))).status).toBe(200);
      });

      it("a passkey sign-in that lands between a reset's new password and its removal of the passkeys is ended", async () => {
        const { passkey: intrudersKey } = await ownerWithPasskey("between@example.com");
        const id = await userIdOf("between@example.com");
        const credential = await authenticator.authenticate(intrudersKey, await signInOptions());
        let intruder: Response | undefined;
        // The intruder's whole sign-in runs after the reset stored its hash and ended the sessions,
        // just before it removes the passkeys: it finds the key and the raised generation.
        const removeAll = gate.passkeys.removeAll.bind(gate.passkeys);
        vi.spyOn(gate.passkeys, "removeAll").mockImplementationOnce(async (userId) => {
          intruder = await passkeySignIn(credential);
          return removeAll(userId);
        });
        const res = await resetByLink(gate, id, "quite another long passphrase, all new", { removePasskeys: true });
        expect(res.status).toBe(200);
        expect(intruder!.status).toBe(200);
        // Its session was written, and is dead; its device is forgotten.
        expect((await sessionWith(sessionPairOf(intruder!)!)).body).toEqual({});
        const usernameKey = gate.usernameKey("between@example.com");
        expect(await gate.devices.recognise(deviceCookieOf(intruder!), usernameKey, Date.now())).toBeNull();
      });

      it("one session cannot spend another session's allowance: the owner still removes the intruder's passkey", async () => {
        const { cookie: intruder } = await ownerWithPasskey("starve@example.com");
        const owner = await signedInBrowser("starve@example.com", PASSWORD);
        const id = (await gate.passkeys.list(await userIdOf("starve@example.com")))[0]!.id;
        for (let i = 0; i < 12; i++) await accountPost("/api/account/passkeys/rename", intruder, { id, name: `x${i}`, json: "true" });
        expect((await accountPost("/api/account/passkeys/rename", intruder, { id, name: "one more", json: "true" })).status).toBe(429);
        expect((await accountPost("/api/account/passkeys/remove", owner, { id, json: "true" })).status).toBe(200);
      });

      it("renaming needs a fresh authentication, is recorded, and takes no text-reordering characters", async () => {
        const { cookie } = await ownerWithPasskey("relabel@example.com");
        const id = (await gate.passkeys.list(await userIdOf("relabel@example.com")))[0]!.id;
        expect(
          (await accountPost("/api/account/passkeys/rename", cookie, { id, name: "Unknown \u202e(remove me)", json: "true" })).status,
        ).toBe(400);
        expect((await accountPost("/api/account/passkeys/rename", cookie, { id, name: "Work laptop", json: "true" })).status).toBe(200);
        expect(await kindsOf("relabel@example.com")).toContain("passkey_renamed");
        vi.spyOn(gate, "clock").mockReturnValue(Date.now() + 11 * 60_000);
        const stale = await accountPost("/api/account/passkeys/rename", cookie, { id, name: "Old phone", json: "true" });
        expect(await stale.json()).toMatchObject({ error: "reauthentication_required" });
      });

      it("a counter gone backwards in 'Confirm it's you' is refused and recorded, as at sign-in", async () => {
        const { cookie, passkey } = await ownerWithPasskey("cloned-reauth@example.com");
        expect((await passkeySignIn(await authenticator.authenticate(passkey, await signInOptions()))).status).toBe(200);
        const options = await accountPost("/api/account/passkeys/options", cookie, { purpose: "reauthenticate" });
        const proof = await authenticator.authenticate(passkey, ((await options.json()) as { options: never }).options, { counter: 1 });
        const res = await accountPost("/api/account/reauthenticate/passkey", cookie, { credential: JSON.stringify(proof) });
        expect(await res.json()).toMatchObject({ reason: "regressed" });
        expect(await kindsOf("cloned-reauth@example.com")).toContain("passkey_counter_regressed");
      });

      it("a passkey starts no session for an account whose address is not confirmed", async () => {
        const { passkey } = await ownerWithPasskey("unconfirmed-pk@example.com");
        await gate.prisma.user.update({ where: { email: "unconfirmed-pk@example.com" }, data: { emailVerifiedAt: null } });
        const res = await passkeySignIn(await authenticator.authenticate(passkey, await signInOptions()));
        expect(sessionPairOf(res)).toBeNull();
        expect(await res.json()).toMatchObject({ reason: "unconfirmed" });
      });

      it("'Confirm it's you' with the password records a re-authentication of this session, not a sign-in, and mails nothing", async () => {
        await createAccount(gate, "reauth-noise@example.com", PASSWORD);
        const cookie = await signedInBrowser("reauth-noise@example.com", PASSWORD);
        const notice = vi.spyOn(gate.recovery, "notice");
        const signedIn = vi.spyOn(gate.events, "signInSucceededWrites");
        const { altchaPayload } = await import("../helpers/browser");
        const res = await accountPost("/api/account/reauthenticate", cookie, {
          password: PASSWORD,
          altcha: await altchaPayload(),
          json: "true",
        });
        expect(res.status).toBe(200);
        expect(signedIn).not.toHaveBeenCalled();
        expect(notice).not.toHaveBeenCalled();
        const events = await gate.events.recent(await userIdOf("reauth-noise@example.com"));
        expect(events.find((event) => event.kind === "reauthenticated")?.sessionId).toBe(await sidOf(cookie));
      });

      it("a registration whose transports hold a control character is a 400, never a 500", async () => {
        await createAccount(gate, "nul-transport@example.com", PASSWORD);
        const cookie = await signedInBrowser("nul-transport@example.com", PASSWORD);
        const optionsRes = await accountPost("/api/account/passkeys/options", cookie, { purpose: "register" });
        const { response } = await authenticator.register(((await optionsRes.json()) as { options: never }).options);
        const bad = { ...response, response: { ...response.response, transports: ["usb\u0000"] } };
        expect((await accountPost("/api/account/passkeys", cookie, { credential: JSON.stringify(bad) })).status).toBe(400);
      });

      it("on the memory store, a challenge spent before a restart does not verify after it", async () => {
        const synced = softAuthenticator({ origin: ORIGIN, synced: true });
        const { passkey } = await ownerWithPasskey("restart@example.com", synced);
        const stored = (await gate.passkeys.find(passkey.credentialId))!;
        const { parseAuthentication, verifyAuthentication } = await import("@/lib/passkeys/webauthn");
        const assertion = parseAuthentication(await synced.authenticate(passkey, await signInOptions()))!;
        expect((await verifyAuthentication(gate.passkeySettings, assertion, stored, "sign_in", "", Date.now())).ok).toBe(true);
        const restarted = await testGatehouse(database.url, {
          NEXTAUTH_SECRET: gate.config.session.secret,
          ...(options.shared ? { RATE_LIMIT_STORE: "postgres" } : {}),
        });
        try {
          const again = await verifyAuthentication(restarted.passkeySettings, assertion, stored, "sign_in", "", Date.now());
          expect(again.ok).toBe(false);
        } finally {
          await restarted.close();
        }
      });
    });

    if (options.shared) {
      it("spends a challenge on every instance at once: two instances raced with one answer, one wins", async () => {
        const { passkey } = await ownerWithPasskey("raced@example.com");
        const other = await testGatehouse(database.url, { RATE_LIMIT_STORE: "postgres" });
        try {
          const { verifyAuthentication, parseAuthentication } = await import("@/lib/passkeys/webauthn");
          const stored = (await gate.passkeys.find(passkey.credentialId))!;
          const assertion = parseAuthentication(await authenticator.authenticate(passkey, await signInOptions()))!;
          const results = await Promise.all(
            [gate, other].map((instance) => verifyAuthentication(instance.passkeySettings, assertion, stored, "sign_in", "", Date.now())),
          );
          expect(results.filter((result) => result.ok)).toHaveLength(1);
          expect(results.find((result) => !result.ok)).toMatchObject({ reason: "replayed" });
        } finally {
          await other.close();
        }
      });
    }
  });
}

// On PostgreSQL the limiter and the replay store are there too, as instances share them.
onEachDatabase("passkeys", ({ label, makeDatabase, kind }) => passkeysSuite(label, makeDatabase, { shared: kind === "postgres" }));

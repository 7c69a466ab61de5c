import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { verifyDeviceToken } from "@/lib/devices/device-token";
import {
  altchaPayload,
  browserSignIn,
  createAccount,
  deviceCookieOf,
  sessionCookieOf,
  tokenSignIn as signInForTokens,
} from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";
import { watchPasswordChecks } from "../helpers/verifications";
import { onEachDatabase } from "../helpers/each-database";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the right passphrase";
const DEVICE_COOKIE = "gatehouse-device";

/**
 * The owner's lane (OWASP device cookies) through the real route handlers and a real database:
 * a browser or app that signed in before is not refused by the lock that strangers share, has a
 * lock of its own, and the cookie gives nothing for another account.
 */
export function knownDevicesSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`known devices on ${label}`, () => {
    let database: TestDatabase;
    let gate: Gate;
    let checks: Awaited<ReturnType<typeof watchPasswordChecks>>;
    const tokenRoute = () => import("@/app/api/v1/authentication/token/route");

    const register = (email: string) => createAccount(gate, email, PASSWORD);
    const tokenSignIn = (email: string, password: string, deviceToken?: string) => signInForTokens(email, password, { deviceToken });

    /** An attacker on other addresses, with no device cookie: five wrong passwords lock the username. */
    async function lockFromElsewhere(email: string) {
      for (let i = 0; i < 5; i++) expect((await tokenSignIn(email, "wrong guess")).status).toBe(401);
      expect((await tokenSignIn(email, PASSWORD)).status).toBe(429);
    }

    function verifiedId(token: string, email: string): string {
      return verifyDeviceToken(gate.config.devices.cookieSecret, token, gate.usernameKey(email), Date.now())!.id;
    }

    /** A solved ALTCHA challenge as the challenge route sizes it for `address` (and a device cookie, if any). */
    async function solvedFor(address: string, device?: string): Promise<string> {
      const { GET } = await import("@/app/api/altcha/challenge/route");
      const { solve } = await import("../helpers/altcha");
      const headers: Record<string, string> = { [PEER_HEADER]: address, ...(device ? { cookie: `${DEVICE_COOKIE}=${device}` } : {}) };
      return solve(await (await GET(new Request("http://localhost/api/altcha/challenge", { headers }))).json());
    }

    /** Signs in once from a fresh browser and returns its device cookie value. */
    async function knownBrowser(email: string): Promise<string> {
      const res = await browserSignIn(email, PASSWORD);
      expect(res.status).toBe(200);
      const device = deviceCookieOf(res);
      expect(device).not.toBeNull();
      return device!;
    }

    beforeAll(async () => {
      announcePeerHeader();
      database = await makeDatabase();
      gate = await servedGatehouse(database.url, { HASH_QUEUE: "100", LOCKOUT_CAP_FAILURES: "8" });
      for (const name of [
        "owner",
        "other",
        "forged",
        "clumsy",
        "app",
        "capped",
        "cookie",
        "pow",
        "racer",
        "busy",
        "browserapi",
        "victim",
        "thief",
        "stale",
        "replaced",
        "copied",
      ]) {
        await register(`${name}@example.com`);
      }
      checks = await watchPasswordChecks(gate);
    });

    afterAll(async () => {
      await closeServed(gate);
      await database?.dispose();
    });

    beforeEach(() => checks.reset());

    it("sets a long-lived HttpOnly, SameSite=Lax device cookie that does not name the user", async () => {
      const res = await browserSignIn("cookie@example.com", PASSWORD);
      const header = res.headers.getSetCookie().find((cookie) => cookie.startsWith(`${DEVICE_COOKIE}=`))!;
      expect(header).toMatch(/; Path=\//);
      expect(header).toMatch(/; HttpOnly/);
      expect(header).toMatch(/; SameSite=Lax/);
      expect(Number(/Max-Age=(\d+)/.exec(header)![1])).toBeGreaterThan(179 * 86_400);
      expect(header).not.toContain("cookie@example.com");
      expect(header).not.toContain("cookie%40example.com");
    });

    it("signs the owner in from a known browser while strangers have the account locked", async () => {
      const device = await knownBrowser("owner@example.com");
      await lockFromElsewhere("owner@example.com");
      checks.reset();

      const res = await browserSignIn("owner@example.com", PASSWORD, { cookie: `${DEVICE_COOKIE}=${device}` });
      expect(res.status).toBe(200);
      expect(sessionCookieOf(res)).not.toBeNull();
      expect(checks.verified()).toBe(1);
      // The cookie rotates: the new one works, the old one is revoked.
      const next = deviceCookieOf(res);
      expect(next).not.toBeNull();
      expect(next).not.toBe(device);
      expect(await gate.devices.recognise(device, gate.usernameKey("owner@example.com"), Date.now())).toBeNull();
      expect(await gate.devices.recognise(next, gate.usernameKey("owner@example.com"), Date.now())).not.toBeNull();
      // The owner's sign-in does not lift the strangers' lock.
      expect((await tokenSignIn("owner@example.com", PASSWORD)).status).toBe(429);
    });

    it("gives nothing for another account: another user's cookie is an untrusted client", async () => {
      const othersDevice = await knownBrowser("other@example.com");
      await lockFromElsewhere("forged@example.com");
      checks.reset();
      const res = await browserSignIn("forged@example.com", PASSWORD, { cookie: `${DEVICE_COOKIE}=${othersDevice}` });
      expect(res.status).toBe(429);
      expect(await res.json()).toMatchObject({ error: "locked" });
      expect(checks.verified()).toBe(0);
    });

    it.each([
      ["forged", (t: string) => `${t.slice(0, -2)}AA`],
      ["truncated", (t: string) => t.slice(0, 30)],
      ["oversized", (t: string) => `${t}${"A".repeat(5_000)}`],
      ["expired", (t: string) => t.replace(/\.(\d+)\./, ".1.")],
      ["junk", () => "%%%;;not-a-token"],
    ])("treats a %s cookie as no cookie: refused by the shared lock, never an error", async (_name, spoil) => {
      const device = await knownBrowser("other@example.com");
      const res = await browserSignIn("forged@example.com", PASSWORD, { cookie: `${DEVICE_COOKIE}=${spoil(device)}` });
      expect(res.status).toBe(429);
      expect(await res.json()).toMatchObject({ error: "locked" });
    });

    it("treats a revoked device as an untrusted client", async () => {
      const device = await knownBrowser("forged@example.com").catch(() => null);
      // forged@ is locked for strangers, so a fresh browser cannot even get a cookie there.
      expect(device).toBeNull();
      const mine = await knownBrowser("other@example.com");
      expect(await gate.devices.forgetAll(gate.usernameKey("other@example.com"))).toBeGreaterThan(0);
      await lockFromElsewhere("other@example.com");
      const res = await browserSignIn("other@example.com", PASSWORD, { cookie: `${DEVICE_COOKIE}=${mine}` });
      expect(res.status).toBe(429);
    });

    it("locks a known device after its own wrong passwords, not the account", async () => {
      const device = await knownBrowser("clumsy@example.com");
      for (let i = 0; i < 5; i++) {
        // Each a different one: the same wrong password again would not be counted (record 19).
        const res = await browserSignIn("clumsy@example.com", `wrong guess ${i}`, { cookie: `${DEVICE_COOKIE}=${device}` });
        expect(res.status).toBe(401);
      }
      const fromDevice = await browserSignIn("clumsy@example.com", PASSWORD, { cookie: `${DEVICE_COOKIE}=${device}` });
      expect(fromDevice.status).toBe(429);
      const body = await fromDevice.json();
      expect(body).toMatchObject({ error: "locked", message: "Sign-in from this device is paused after repeated failed attempts." });
      // The device's holder may know exactly when: it proved itself before.
      expect(new Date(body.lockedUntil).getTime()).toBeGreaterThan(Date.now());
      // The username is not locked: another browser signs in.
      expect((await browserSignIn("clumsy@example.com", PASSWORD)).status).toBe(200);
    });

    it("takes the device token in the API's body and returns a new one", async () => {
      const first = await tokenSignIn("app@example.com", PASSWORD);
      expect(first.status).toBe(200);
      const { device_token: deviceToken } = (await first.json()) as { device_token: string };
      await lockFromElsewhere("app@example.com");
      const again = await tokenSignIn("app@example.com", PASSWORD, deviceToken);
      expect(again.status).toBe(200);
      const body = (await again.json()) as { device_token: string };
      expect(body.device_token).not.toBe(deviceToken);
      // The spent token is revoked; the new one is the app's now.
      expect(await gate.devices.recognise(deviceToken, gate.usernameKey("app@example.com"), Date.now())).toBeNull();
      expect(await gate.devices.recognise(body.device_token, gate.usernameKey("app@example.com"), Date.now())).not.toBeNull();
    });

    it("caps consecutive failures (NIST): untrusted clients stay refused until the owner signs in from a known device", async () => {
      const device = await knownBrowser("capped@example.com");
      const key = gate.usernameKey("capped@example.com");
      // Eight failures an hour apart, each after the last lock ended, as a patient attacker would
      // (LOCKOUT_CAP_FAILURES=8 here): the eighth reaches the cap.
      const hourMs = 3_600_000;
      for (let i = 0; i < 8; i++)
        expect((await gate.lockouts.admitAttempt(key, Date.now() - (8 - i) * hourMs, gate.config.lockout)).allowed).toBe(true);
      const stranger = await browserSignIn("capped@example.com", PASSWORD);
      expect(stranger.status).toBe(429);
      expect(await stranger.json()).toMatchObject({
        error: "locked",
        capped: true,
        message: expect.stringContaining("device you have used before"),
      });

      const owner = await browserSignIn("capped@example.com", PASSWORD, { cookie: `${DEVICE_COOKIE}=${device}` });
      expect(owner.status).toBe(200);
      expect((await gate.lockouts.check(key, Date.now(), gate.config.lockout)).locked).toBe(false);
      expect((await browserSignIn("capped@example.com", PASSWORD)).status).toBe(200);
    });

    it("serves one sign-in per device at a time: a copied token raced in parallel is an untrusted client", async () => {
      const device = await knownBrowser("racer@example.com");
      await lockFromElsewhere("racer@example.com");
      checks.reset();
      const results = await Promise.all(
        Array.from({ length: 4 }, () => browserSignIn("racer@example.com", PASSWORD, { cookie: `${DEVICE_COOKIE}=${device}` })),
      );
      // One got the device (and rotated it); the rest met the strangers' lock.
      expect(results.map((res) => res.status).sort()).toEqual([200, 429, 429, 429]);
      expect(results.filter((res) => deviceCookieOf(res) !== null)).toHaveLength(1);
      expect(checks.verified()).toBe(1);
    });

    // The challenge route sizes a live device's challenge at the base (it cannot know the lane): a
    // device the lane declines is served as a stranger with it, never refused it for good.
    it("a live device past the lane's allowance signs in as a stranger with its base-size proof of work", async () => {
      let device = await knownBrowser("copied@example.com");
      for (let i = 0; i < 10; i++)
        device = deviceCookieOf(await browserSignIn("copied@example.com", PASSWORD, { cookie: `${DEVICE_COOKIE}=${device}` }))!;
      checks.reset();
      const address = freshAddress();
      gate.addressFailures.set(address, 30);
      const res = await browserSignIn("copied@example.com", PASSWORD, {
        address,
        cookie: `${DEVICE_COOKIE}=${device}`,
        fields: { altcha: await solvedFor(address, device) },
      });
      expect(res.status).toBe(200);
      expect(checks.verified()).toBe(1);
    });

    it("leaves the device free when the CSRF rule refuses, so the owner's next try is still in the lane", async () => {
      const device = await knownBrowser("stale@example.com");
      const stale = await browserSignIn("stale@example.com", PASSWORD, {
        cookie: `${DEVICE_COOKIE}=${device}`,
        headers: { "sec-fetch-site": "cross-site" },
      });
      expect(stale.status).toBe(403);
      expect(
        await gate.devices.claim(verifiedId(device, "stale@example.com"), gate.usernameKey("stale@example.com"), Date.now(), 1_000),
      ).toBe("claimed");
    });

    it("gives a username the owner's lane a few times an hour, then treats it as untrusted", async () => {
      let device = await knownBrowser("busy@example.com");
      // knownBrowser's first sign-in was untrusted; the lane allows 10 per hour per username.
      for (let i = 0; i < 10; i++) {
        const res = await browserSignIn("busy@example.com", PASSWORD, { cookie: `${DEVICE_COOKIE}=${device}` });
        expect(res.status).toBe(200);
        device = deviceCookieOf(res)!;
      }
      await lockFromElsewhere("busy@example.com");
      const eleventh = await browserSignIn("busy@example.com", PASSWORD, { cookie: `${DEVICE_COOKIE}=${device}` });
      expect(eleventh.status).toBe(429);
      // Declined, not spent: the device still works once the lane has room again.
      expect(await gate.devices.recognise(device, gate.usernameKey("busy@example.com"), Date.now())).not.toBeNull();
    });

    it("refuses a proof of work easier than the address calls for, even with another account's device cookie", async () => {
      const attackersDevice = await knownBrowser("pow@example.com");
      checks.reset();
      const address = freshAddress();
      gate.addressFailures.set(address, 30);
      // The attacker's own known device gets a base-size challenge…
      const cheap = await solvedFor(address, attackersDevice);
      // …which does not pay for a guess at someone else's account from that address.
      const request = new Request("http://localhost/api/v1/authentication/token", {
        method: "POST",
        headers: { "content-type": "application/json", [PEER_HEADER]: address },
        body: JSON.stringify({ email: "victim@example.com", password: "a guess", altcha: cheap }),
      });
      const res = await (await tokenRoute()).POST(request);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: "captcha_invalid", reason: "too_easy" });
      expect(checks.verified()).toBe(0);
    });

    // The device is looked up only by its claim, after the proof of work: a token whose device is
    // gone (replaced at its next sign-in, revoked) must not keep the base size it was let off with.
    it("refuses a proof of work easier than the address calls for with the account's own replaced device token", async () => {
      const old = await knownBrowser("replaced@example.com");
      const current = deviceCookieOf(await browserSignIn("replaced@example.com", PASSWORD, { cookie: `${DEVICE_COOKIE}=${old}` }))!;
      expect(await gate.devices.recognise(old, gate.usernameKey("replaced@example.com"), Date.now())).toBeNull();
      checks.reset();
      const address = freshAddress();
      gate.addressFailures.set(address, 30);
      const guess = (altcha: string) =>
        new Request("http://localhost/api/v1/authentication/token", {
          method: "POST",
          headers: { "content-type": "application/json", [PEER_HEADER]: address },
          body: JSON.stringify({ email: "replaced@example.com", password: "a guess", altcha, device_token: old }),
        });
      // A base-size challenge, from any live device's cookie.
      const res = await (await tokenRoute()).POST(guess(await solvedFor(address, current)));
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: "captcha_invalid", reason: "too_easy" });
      expect(checks.verified()).toBe(0);
      // The same old token with the level the address owes is a stranger's guess, counted as one.
      expect((await (await tokenRoute()).POST(guess(await solvedFor(address)))).status).toBe(401);
      expect(checks.verified()).toBe(1);
    });

    it("re-sets the cookie when a browser used it on the API, so the browser keeps its place", async () => {
      const device = await knownBrowser("browserapi@example.com");
      const request = new Request("http://localhost/api/v1/authentication/token", {
        method: "POST",
        headers: { "content-type": "application/json", [PEER_HEADER]: freshAddress(), cookie: `${DEVICE_COOKIE}=${device}` },
        body: JSON.stringify({ email: "browserapi@example.com", password: PASSWORD, altcha: await altchaPayload() }),
      });
      const res = await (await tokenRoute()).POST(request);
      expect(res.status).toBe(200);
      const { device_token: token } = (await res.json()) as { device_token: string };
      expect(deviceCookieOf(res)).toBe(token);
    });

    it("revokes a device that reaches the cap of failures (a stolen cookie is not endless guesses)", async () => {
      const device = await knownBrowser("thief@example.com");
      const id = verifiedId(device, "thief@example.com");
      // Seven failures an hour apart (the cap is 8 here), then the eighth through the route.
      const hourMs = 3_600_000;
      for (let i = 0; i < 7; i++)
        await gate.lockouts.admitAttempt(gate.deviceLockKey(id), Date.now() - (8 - i) * hourMs, gate.config.devices.lockout);
      const eighth = await browserSignIn("thief@example.com", "wrong guess", { cookie: `${DEVICE_COOKIE}=${device}` });
      expect(eighth.status).toBe(401);
      expect(await gate.devices.recognise(device, gate.usernameKey("thief@example.com"), Date.now())).toBeNull();
    });

    it("sizes the proof of work by pressure, and keeps a known device at the base size", async () => {
      const { GET } = await import("@/app/api/altcha/challenge/route");
      const { solve } = await import("../helpers/altcha");
      const device = await knownBrowser("pow@example.com");
      const address = freshAddress();
      gate.addressFailures.set(address, 30);
      async function counter(cookie?: string) {
        const headers: Record<string, string> = { [PEER_HEADER]: address, ...(cookie ? { cookie } : {}) };
        const challenge = await (await GET(new Request("http://localhost/api/altcha/challenge", { headers }))).json();
        const payload = JSON.parse(Buffer.from(await solve(challenge), "base64").toString()) as { solution: { counter: number } };
        return payload.solution.counter;
      }
      const base = gate.config.altcha.maxCounter;
      // Five and five: the challenge limit allows ten per 10 s from one address.
      const known = await Promise.all(Array.from({ length: 5 }, () => counter(`${DEVICE_COOKIE}=${device}`)));
      expect(Math.max(...known)).toBeLessThanOrEqual(base);
      // Level 3 (8×): counters fall in [0.8, 8] × base; five of them all at or below the base is (0.2/7.2)^5.
      const pressed = await Promise.all(Array.from({ length: 5 }, () => counter()));
      expect(Math.max(...pressed)).toBeGreaterThan(base);
      expect(Math.min(...pressed)).toBeGreaterThanOrEqual(Math.floor((base * 8) / 10));
    });
  });
}

onEachDatabase("known devices", ({ label, makeDatabase }) => knownDevicesSuite(label, makeDatabase));

import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { accountFormPost, browserSignIn, deviceCookieOf, sessionPairOf, tokenSignIn } from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { servedForSuite } from "../helpers/served-suite";
import { onEachDatabase } from "../helpers/each-database";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the right passphrase";
const DEVICE_COOKIE = "gatehouse-device";
const FIREFOX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0";

/**
 * "Known devices" on the account page (issue 57, item 4), through the real sign-in and forget
 * routes and a real database: what each device records, and that forgetting one takes it out of
 * the owner's lane at once, so that its next sign-in is a new device's.
 */
export function accountDevicesSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`known devices on the account page on ${label}`, () => {
    const served = servedForSuite(
      makeDatabase,
      ["listed", "forgetter", "self", "lane"].map((name) => `${name}@example.com`),
      PASSWORD,
    );
    let gate: Gate;
    beforeAll(() => {
      gate = served.gate;
    });

    afterEach(() => vi.restoreAllMocks());

    /** A browser that signed in: its session cookie (`name=value`) and its device cookie's value. */
    async function signedIn(email: string, options: { device?: string; address?: string } = {}) {
      const res = await browserSignIn(email, PASSWORD, {
        userAgent: FIREFOX,
        ...(options.address ? { address: options.address } : {}),
        ...(options.device ? { cookie: `${DEVICE_COOKIE}=${options.device}` } : {}),
      });
      expect(res.status).toBe(200);
      return { session: sessionPairOf(res)!, device: deviceCookieOf(res)! };
    }

    const listOf = (email: string) => gate.devices.listOf(gate.usernameKey(email), gate.clock());

    /** Five wrong passwords from other addresses and no device: strangers are locked out of the username. */
    async function lockFromElsewhere(email: string) {
      for (let i = 0; i < 5; i++) expect((await tokenSignIn(email, `wrong guess ${i}`)).status).toBe(401);
      expect((await tokenSignIn(email, PASSWORD)).status).toBe(429);
    }

    it("lists each device with its browser, its network shortened as the events show it, and when it was first and last seen", async () => {
      const t0 = Date.now();
      vi.spyOn(gate, "clock").mockReturnValue(t0);
      const first = await signedIn("listed@example.com", { address: "198.51.100.23" });
      vi.spyOn(gate, "clock").mockReturnValue(t0 + 3_600_000);
      // The same browser signs in again an hour later from elsewhere: its row is replaced, its first sighting kept.
      const again = await signedIn("listed@example.com", { device: first.device, address: "203.0.113.77" });
      const [device, ...others] = await listOf("listed@example.com");
      expect(others).toEqual([]);
      expect(device).toMatchObject({ label: "Firefox on Linux", address: "203.0.113.x" });
      expect(device!.firstSeenAt!.getTime()).toBe(t0);
      expect(device!.lastSeenAt.getTime()).toBe(t0 + 3_600_000);
      expect(gate.devices.signed(again.device, gate.usernameKey("listed@example.com"), t0 + 3_600_000)?.id).toBe(device!.id);
    });

    it("forgets a device: gone from the list, recorded, and its next sign-in is a new device's", async () => {
      const kept = await signedIn("forgetter@example.com");
      const forgotten = await signedIn("forgetter@example.com");
      const id = gate.devices.signed(forgotten.device, gate.usernameKey("forgetter@example.com"), gate.clock())!.id;
      expect((await listOf("forgetter@example.com")).map((device) => device.id)).toContain(id);

      const res = await accountFormPost(gate, "/api/account/devices/forget", kept.session, { id });
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe("/account?notice=device_forgotten");
      // Not this browser's device: its cookie stays.
      expect(res.headers.getSetCookie()).toEqual([]);
      expect((await listOf("forgetter@example.com")).map((device) => device.id)).not.toContain(id);
      const user = await gate.prisma.user.findUniqueOrThrow({ where: { email: "forgetter@example.com" } });
      expect((await gate.events.recent(user.id, 5)).map((event) => event.kind)).toContain("device_forgotten");

      const notice = vi.spyOn(gate.recovery, "newDeviceSignIn");
      const back = await signedIn("forgetter@example.com", { device: forgotten.device });
      expect(notice).toHaveBeenCalledWith(expect.anything(), expect.anything(), expect.objectContaining({ sessionId: expect.any(String) }));
      const newcomer = (await listOf("forgetter@example.com")).find(
        (device) => device.id === gate.devices.signed(back.device, gate.usernameKey("forgetter@example.com"), gate.clock())!.id,
      );
      // A new device: nothing carried over from the forgotten one.
      expect(newcomer!.firstSeenAt!.getTime()).toBe(newcomer!.lastSeenAt.getTime());
    });

    it("forgetting this very browser's device clears its cookie too", async () => {
      const self = await signedIn("self@example.com");
      const id = gate.devices.signed(self.device, gate.usernameKey("self@example.com"), gate.clock())!.id;
      const res = await accountFormPost(
        gate,
        "/api/account/devices/forget",
        self.session,
        { id, json: "true" },
        { cookie: `${self.session}; ${DEVICE_COOKIE}=${self.device}` },
      );
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: "device_forgotten" });
      expect(res.headers.getSetCookie().find((cookie) => cookie.startsWith(`${DEVICE_COOKIE}=;`))).toMatch(/Max-Age=0/);
      expect(await listOf("self@example.com")).toEqual([]);
    });

    it("takes a forgotten device out of the owner's lane at once: the strangers' lock refuses it", async () => {
      const owner = await signedIn("lane@example.com");
      const phone = await signedIn("lane@example.com");
      await lockFromElsewhere("lane@example.com");
      // Known, the phone passes the strangers' lock.
      const passes = await signedIn("lane@example.com", { device: phone.device });
      const id = gate.devices.signed(passes.device, gate.usernameKey("lane@example.com"), gate.clock())!.id;
      expect((await accountFormPost(gate, "/api/account/devices/forget", owner.session, { id, json: "true" })).status).toBe(200);
      const refused = await browserSignIn("lane@example.com", PASSWORD, { cookie: `${DEVICE_COOKIE}=${passes.device}` });
      expect(refused.status).toBe(429);
      expect(await refused.json()).toMatchObject({ error: "locked" });
      expect(await gate.devices.isKnown(passes.device, gate.clock())).toBe(false);
    });
  });
}

onEachDatabase("known devices on the account page", ({ label, makeDatabase }) => accountDevicesSuite(label, makeDatabase));

import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { Gatehouse } from "@/lib/gatehouse";
import { passwordSha1, rangeBreachCheck } from "@/lib/password/breached";
import { startRangeServer } from "../helpers/range-server";
import { altchaPayload, browserSignIn, createAccount, sessionPairOf, tokenSignIn } from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";
import { freePort } from "../helpers/ports";
import { onEachDatabase } from "../helpers/each-database";

/** Long enough, past zxcvbn-ts's threshold, on no list: only the corpus below can refuse them. */
const LEAKED = "velvet harbour quince 1931";
const CLEAN = "amber lantern tortoise 5512";
const LEAKED_OLD = "saffron pylon mitten 2048";

/** Registration, reset-less change and sign-in against a local Pwned Passwords range server. */
export function breachedPasswordsSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`breached passwords on ${label}`, () => {
    let database: TestDatabase;
    let gate: Gatehouse;
    let ranges: Awaited<ReturnType<typeof startRangeServer>>;

    beforeAll(async () => {
      announcePeerHeader();
      ranges = await startRangeServer([LEAKED, LEAKED_OLD]);
      database = await makeDatabase();
      // The mark alone: a breached password from a new device also waits for a mailed code by
      // default, which tests/integration/device-confirmation.suite.ts covers.
      gate = await servedGatehouse(database.url, {
        BREACHED_PASSWORDS_URL: `${ranges.base}/ok`,
        REQUIRE_EMAIL_VERIFICATION: "false",
        NEW_DEVICE_CONFIRMATION: "off",
      });
    });

    afterAll(async () => {
      await closeServed(gate);
      await database?.dispose();
      await ranges?.close();
    });

    beforeEach(() => {
      ranges.seen.length = 0;
    });

    /** The checker pointed at another behaviour of the range server (a test's own; the served root keeps its config). */
    function pointAt(url: string) {
      gate.breachedPasswords = rangeBreachCheck({
        url,
        timeoutMs: gate.config.passwords.breachedTimeoutMs,
        cacheMs: gate.config.passwords.breachedCacheMs,
        onUnavailable: () => {},
        onVerdict: (verdict) => gate.metrics.breachChecks.inc({ verdict }),
      });
    }

    async function register(email: string, password: string) {
      const route = await import("@/app/api/register/route");
      return route.POST(
        new Request("http://localhost/api/register", {
          method: "POST",
          headers: { "content-type": "application/json", [PEER_HEADER]: freshAddress() },
          body: JSON.stringify({ email, password, altcha: await altchaPayload() }),
        }),
      );
    }

    async function verdicts(): Promise<Record<string, number>> {
      const metric = await gate.metrics.breachChecks.get();
      return Object.fromEntries(metric.values.map((value) => [String(value.labels.verdict), value.value]));
    }

    it("refuses a breached password at registration with a reason, sending only 5 hex digits, padded", async () => {
      const res = await register("leaky@example.com", LEAKED);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: "invalid_input", fields: { password: expect.stringMatching(/data breach/) } });
      expect(await gate.prisma.user.count({ where: { email: "leaky@example.com" } })).toBe(0);
      expect(ranges.seen).toEqual([{ path: `/ok/range/${passwordSha1(LEAKED).slice(0, 5)}`, padding: "true" }]);
      expect(ranges.seen[0]!.path).not.toContain(passwordSha1(LEAKED).slice(5));
    });

    it("accepts a password the corpus does not hold, and asks a cached prefix only once", async () => {
      expect((await register("clean@example.com", CLEAN)).status).toBe(202);
      expect((await register("clean2@example.com", CLEAN)).status).toBe(202);
      expect(ranges.seen).toHaveLength(1);
    });

    it.each([
      ["answers after the 1 s timeout", "slow"],
      ["answers 500", "error"],
      ["answers garbage", "garbage"],
    ])("fails open when the range service %s: the registration succeeds, counted as unknown", async (_name, mode) => {
      pointAt(`${ranges.base}/${mode}`);
      const before = (await verdicts()).unknown ?? 0;
      const res = await register(`open-${mode}@example.com`, LEAKED);
      expect(res.status).toBe(202);
      expect((await verdicts()).unknown).toBe(before + 1);
      pointAt(`${ranges.base}/ok`);
    });

    it("fails open on a closed port, and never answers 500", async () => {
      pointAt(`http://127.0.0.1:${await freePort()}`);
      const res = await register("open-closed@example.com", LEAKED);
      expect(res.status).toBe(202);
      pointAt(`${ranges.base}/ok`);
    });

    // Found by the stuffing drill (bench part 12): the sign-in replaced the app's device token and
    // the 403 dropped the new one, so the owner's app lost its known device to a breached password.
    it("an app keeps its known device when its password is found breached: the 403 carries the new device_token", async () => {
      const password = "juniper quarry lantern 7721";
      await createAccount(gate, "app-owner@example.com", password);
      ranges.leak([password]);
      const key = gate.usernameKey("app-owner@example.com");
      const first = await tokenSignIn("app-owner@example.com", password);
      expect(first.status).toBe(403);
      const firstBody = (await first.json()) as Record<string, unknown>;
      expect(firstBody).toMatchObject({ error: "password_change_required", device_token: expect.any(String) });
      expect(firstBody).not.toHaveProperty("access_token");
      const device = firstBody.device_token as string;
      expect(await gate.devices.recognise(device, key, Date.now())).not.toBeNull();

      const second = await tokenSignIn("app-owner@example.com", password, { deviceToken: device });
      expect(second.status).toBe(403);
      const next = ((await second.json()) as { device_token?: string }).device_token;
      expect(await gate.devices.recognise(device, key, Date.now())).toBeNull();
      expect(await gate.devices.recognise(next, key, Date.now())).not.toBeNull();
    });

    it("a sign-in already written stands when its breach mark fails: 200, sent to choose a new password", async () => {
      const userId = await createAccount(gate, "mark-fails@example.com", LEAKED_OLD);
      const accountChanged = gate.events.accountChanged.bind(gate.events);
      const spy = vi.spyOn(gate.events, "accountChanged").mockImplementation(async (id, kind, ...rest) => {
        if (kind === "password_found_breached") throw new Error("the database went away");
        return accountChanged(id, kind, ...rest);
      });
      const res = await browserSignIn("mark-fails@example.com", LEAKED_OLD).finally(() => spy.mockRestore());
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ url: expect.stringMatching(/\/account\/new-password$/) });
      // The session it answers with is the one that was written.
      const sessions = await gate.prisma.browserSession.findMany({ where: { userId }, select: { id: true } });
      expect(sessions).toHaveLength(1);
      expect(sessionPairOf(res)).not.toBeNull();
    });

    it("signs in a right breached password but marks the account: API 403, pages sent to choose, owner mailed once", async () => {
      const userId = await createAccount(gate, "old@example.com", LEAKED_OLD);
      ranges.seen.length = 0;

      // A wrong password is never looked up.
      expect((await browserSignIn("old@example.com", "not the password at all")).status).toBe(401);
      expect(ranges.seen).toHaveLength(0);

      const res = await browserSignIn("old@example.com", LEAKED_OLD);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ url: expect.stringMatching(/\/account\/new-password$/) });
      const cookie = sessionPairOf(res)!;
      const user = await gate.prisma.user.findUniqueOrThrow({ where: { id: userId } });
      expect(user.passwordBreachedAt).not.toBeNull();
      expect(await gate.prisma.securityEvent.count({ where: { userId, kind: "password_found_breached" } })).toBe(1);

      // Every API call with that session says what to do, with a clear code.
      const me = await (
        await import("@/app/api/v1/me/route")
      ).GET(
        new (await import("next/server")).NextRequest("http://localhost/api/v1/me", { headers: { cookie, [PEER_HEADER]: freshAddress() } }),
      );
      expect(me.status).toBe(403);
      expect(await me.json()).toMatchObject({ error: "password_change_required", location: "/account/new-password" });

      // The token API gives no tokens for it.
      const token = await tokenSignIn("old@example.com", LEAKED_OLD);
      expect(token.status).toBe(403);
      expect(await token.json()).toMatchObject({ error: "password_change_required" });
      expect(await gate.prisma.securityEvent.count({ where: { userId, kind: "password_found_breached" } })).toBe(1);
    });
  });
}

onEachDatabase("breached passwords", ({ label, makeDatabase }) => breachedPasswordsSuite(label, makeDatabase));

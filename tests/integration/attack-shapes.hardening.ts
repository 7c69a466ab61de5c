import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { NextRequest } from "next/server";
import { solve } from "../helpers/altcha";
import { accountFormPost, browserSignIn, createAccount, deviceCookieOf, sessionPairOf, sessionWith, tokenSignIn } from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, runAdminCommand, servedGatehouse } from "../helpers/instance";
import { freshAddress, PEER_HEADER } from "../helpers/peer";
import { holdSignInWrites } from "../helpers/sign-in-writes";
import { APP_GATEHOUSE, serve } from "@/lib/app";
import { forget, remember } from "@/lib/remember";

type Gate = import("@/lib/app").Gatehouse;
type Checks = { verified(): number; reset(): void };
type Tokens = { access_token: string; refresh_token: string };

const PASSWORD = "the right passphrase";
const DEVICE_COOKIE = "gatehouse-device";

/**
 * The findings of the hardening review (issue 25), each as the attacker reproduced it: an access
 * token outliving what it came from, a sign-in in flight outliving "sign out everywhere", a
 * download link opening any report any number of times, proof of work cheapened by a cookie or
 * a quiet moment, a proxy writing `ip:port`, and confirmation mail nobody can use.
 */
export function hardeningShapes(current: () => { gate: Gate; checks: Checks }, makeDatabase: () => Promise<TestDatabase>) {
  const gate = () => current().gate;

  const bearer = (token: string, extra: Record<string, string> = {}) => ({
    authorization: `Bearer ${token}`,
    [PEER_HEADER]: freshAddress(),
    ...extra,
  });

  async function me(token: string) {
    const route = await import("@/app/api/v1/me/route");
    return route.GET(new NextRequest("http://localhost/api/v1/me", { headers: bearer(token) }));
  }

  async function buildReport(token: string) {
    const route = await import("@/app/api/v1/reports/route");
    return route.POST(new NextRequest("http://localhost/api/v1/reports", { method: "POST", headers: bearer(token) }));
  }

  async function mintDownloadToken(token: string, reportId?: string) {
    const route = await import("@/app/api/v1/download-tokens/route");
    const body = JSON.stringify(reportId === undefined ? {} : { report_id: reportId });
    return route.POST(
      new NextRequest("http://localhost/api/v1/download-tokens", {
        method: "POST",
        headers: bearer(token, { "content-type": "application/json" }),
        body,
      }),
    );
  }

  async function download(reportId: string, downloadToken: string) {
    const route = await import("@/app/api/v1/reports/[id]/route");
    const url = `http://localhost/api/v1/reports/${reportId}?token=${encodeURIComponent(downloadToken)}`;
    return route.GET(new NextRequest(url, { headers: { [PEER_HEADER]: freshAddress() } }), { params: Promise.resolve({ id: reportId }) });
  }

  async function tokensFor(email: string): Promise<Tokens> {
    const res = await tokenSignIn(email, PASSWORD);
    expect(res.status).toBe(200);
    return (await res.json()) as Tokens;
  }

  /** The access token is refused as the issue asks: 401 invalid_token on every API route that takes it. */
  async function expectTokenDead(token: string) {
    for (const res of [await me(token), await buildReport(token), await mintDownloadToken(token)]) {
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: "invalid_token" });
    }
  }

  async function signOutEverywhereElse(cookie: string) {
    const res = await accountFormPost(gate(), "/api/account/sessions/revoke-others", cookie, {});
    expect(res.headers.get("location")).toBe("/account?notice=signed_out_everywhere_else");
  }

  const adminRevokeSessions = (email: string) => runAdminCommand(gate(), "revoke-sessions", email);

  async function signedIn(email: string) {
    const res = await browserSignIn(email, PASSWORD);
    const pair = sessionPairOf(res);
    expect(res.status).toBe(200);
    return pair!;
  }

  const isLive = async (cookie: string) => (await sessionWith(cookie)).body.user !== undefined;

  /**
   * Holds a sign-in between its password check (which read the account) and the writing of its
   * session or tokens, runs `meanwhile`, then lets it finish: the race the review found.
   */
  async function inFlight<T>(signIn: () => Promise<T>, meanwhile: () => Promise<unknown>): Promise<T> {
    const held = holdSignInWrites(gate());
    try {
      const pending = signIn();
      await held.reached;
      await meanwhile();
      held.release();
      return await pending;
    } finally {
      held.restore();
    }
  }

  describe("access tokens die with what they came from (issue 25, item 1)", () => {
    beforeAll(async () => {
      for (const name of ["family", "generation", "admin", "everywhere", "raceb", "racek", "racet", "racea", "racel"])
        await createAccount(gate(), `${name}@example.com`, PASSWORD);
    });

    it("refuses a token whose API session was revoked from the account page", async () => {
      const tokens = await tokensFor("family@example.com");
      expect((await me(tokens.access_token)).status).toBe(200);
      const { refreshTokenDigest, revokeUserFamily } = await import("@/lib/tokens/refresh-tokens");
      const row = await gate().prisma.refreshToken.findUniqueOrThrow({ where: { tokenHash: refreshTokenDigest(tokens.refresh_token) } });
      expect(await revokeUserFamily(gate().prisma, row.userId, row.familyId, Date.now())).toBe(1);
      await expectTokenDead(tokens.access_token);
    });

    it("refuses a token issued before a password change or reset (the UPDATE both make raises the generation)", async () => {
      const tokens = await tokensFor("generation@example.com");
      const fresh = await tokensFor("generation@example.com");
      await gate().prisma.user.update({ where: { email: "generation@example.com" }, data: { credentialGeneration: { increment: 1 } } });
      await expectTokenDead(tokens.access_token);
      await expectTokenDead(fresh.access_token);
    });

    it("refuses a token after the operator's revoke-sessions and after sign out everywhere else", async () => {
      const revoked = await tokensFor("admin@example.com");
      await adminRevokeSessions("admin@example.com");
      await expectTokenDead(revoked.access_token);

      const here = await signedIn("everywhere@example.com");
      const elsewhere = await tokensFor("everywhere@example.com");
      await signOutEverywhereElse(here);
      await expectTokenDead(elsewhere.access_token);
      expect(await isLive(here)).toBe(true);
    });

    /** Known devices of the username: each is a lane past the strangers' lock, so a late one outlives the revocation. */
    const devicesOf = (email: string) => gate().prisma.knownDevice.count({ where: { usernameKey: gate().usernameKey(email) } });
    const succeededEvents = async (email: string) => {
      const { id } = await gate().prisma.user.findUniqueOrThrow({ where: { email } });
      return gate().prisma.securityEvent.count({ where: { userId: id, kind: "sign_in_succeeded" } });
    };

    it("a browser sign-in in flight across sign out everywhere else writes nothing and gets the generic answer", async () => {
      const here = await signedIn("raceb@example.com");
      const before = { devices: await devicesOf("raceb@example.com"), events: await succeededEvents("raceb@example.com") };
      const res = await inFlight(
        () => browserSignIn("raceb@example.com", PASSWORD),
        () => signOutEverywhereElse(here),
      );
      // Its password was checked under the generation the revocation left: no session, no device, no event.
      expect(res.status).toBe(401);
      expect(sessionPairOf(res)).toBeNull();
      expect(deviceCookieOf(res)).toBeNull();
      expect(await devicesOf("raceb@example.com")).toBe(before.devices);
      expect(await succeededEvents("raceb@example.com")).toBe(before.events);
      expect(await isLive(here)).toBe(true);
      // The race is closed, not the account: the next sign-in works.
      expect(await isLive(await signedIn("raceb@example.com"))).toBe(true);
    });

    it("a known device's sign-in in flight across sign out everywhere else keeps the device it would have replaced", async () => {
      const first = await browserSignIn("racek@example.com", PASSWORD);
      const here = sessionPairOf(first)!;
      const device = deviceCookieOf(first)!;
      const res = await inFlight(
        () => browserSignIn("racek@example.com", PASSWORD, { cookie: `${DEVICE_COOKIE}=${device}` }),
        () => signOutEverywhereElse(here),
      );
      expect(res.status).toBe(401);
      // No write of the statement happened, its DELETE of the device it replaces neither: the
      // owner's device is still known, and free for its next sign-in.
      const usernameKey = gate().usernameKey("racek@example.com");
      expect(await gate().devices.recognise(device, usernameKey, Date.now())).not.toBeNull();
      expect(await gate().devices.claim(gate().devices.signed(device, usernameKey, Date.now())!.id, usernameKey, Date.now(), 1_000)).toBe(
        "claimed",
      );
    });

    it("an API sign-in in flight across sign out everywhere else gets no tokens and no device", async () => {
      const here = await signedIn("racet@example.com");
      const devices = await devicesOf("racet@example.com");
      const res = await inFlight(
        () => tokenSignIn("racet@example.com", PASSWORD),
        () => signOutEverywhereElse(here),
      );
      expect(res.status).toBe(401);
      expect(await res.json()).not.toHaveProperty("access_token");
      expect(await devicesOf("racet@example.com")).toBe(devices);
    });

    it("a sign-in in flight across the operator's revoke-sessions leaves no known device behind", async () => {
      const res = await inFlight(
        () => browserSignIn("racea@example.com", PASSWORD),
        () => adminRevokeSessions("racea@example.com"),
      );
      expect(res.status).toBe(401);
      expect(sessionPairOf(res)).toBeNull();
      // revoke-sessions forgot every device; one written after it would be the attacker's lane.
      expect(await devicesOf("racea@example.com")).toBe(0);
      expect(await isLive(await signedIn("racea@example.com"))).toBe(true);
    });

    it("a sign-in in flight that was superseded clears no lock: its counted attempt stays counted", async () => {
      const usernameKey = gate().usernameKey("racel@example.com");
      const failures = async () =>
        (await gate().prisma.signInLockout.findUnique({ where: { usernameKey }, select: { failureCount: true } }))?.failureCount;
      const res = await inFlight(
        () => browserSignIn("racel@example.com", PASSWORD),
        async () => {
          // Counted before Argon2id, as every attempt is; a written sign-in would reset it.
          expect(await failures()).toBe(1);
          await adminRevokeSessions("racel@example.com");
        },
      );
      expect(res.status).toBe(401);
      expect(await failures()).toBe(1);
      // A sign-in that is written clears it.
      expect(await isLive(await signedIn("racel@example.com"))).toBe(true);
      expect(await failures()).toBe(0);
    });

    it("a sign-in in flight when the account is deleted writes nothing and gets the generic answer", async () => {
      await createAccount(gate(), "raced@example.com", PASSWORD);
      const res = await inFlight(
        () => browserSignIn("raced@example.com", PASSWORD),
        () => gate().prisma.user.delete({ where: { email: "raced@example.com" } }),
      );
      expect(res.status).toBe(401);
      expect(deviceCookieOf(res)).toBeNull();
      expect(await devicesOf("raced@example.com")).toBe(0);
    });
  });

  describe("a download link opens one report, once (issue 25, item 5)", () => {
    let tokens: Tokens;
    let reports: string[];

    beforeAll(async () => {
      await createAccount(gate(), "downloads@example.com", PASSWORD);
      await createAccount(gate(), "neighbour@example.com", PASSWORD);
      tokens = await tokensFor("downloads@example.com");
      reports = [];
      for (let i = 0; i < 2; i++) {
        const res = await buildReport(tokens.access_token);
        expect(res.status).toBe(201);
        reports.push(((await res.json()) as { id: string }).id);
      }
    });

    async function linkFor(reportId: string): Promise<string> {
      const res = await mintDownloadToken(tokens.access_token, reportId);
      expect(res.status).toBe(201);
      return ((await res.json()) as { token: string }).token;
    }

    it("opens the report it names once; a second use gets 404", async () => {
      const link = await linkFor(reports[0]!);
      expect((await download(reports[0]!, link)).status).toBe(200);
      const again = await download(reports[0]!, link);
      expect(again.status).toBe(404);
      expect(await again.json()).toMatchObject({ error: "not_found" });
    });

    it("does not open another report of the same user", async () => {
      const link = await linkFor(reports[0]!);
      expect((await download(reports[1]!, link)).status).toBe(404);
    });

    it("is not minted without a report, nor for someone else's report", async () => {
      const missing = await mintDownloadToken(tokens.access_token);
      expect(missing.status).toBe(400);
      expect(await missing.json()).toMatchObject({ error: "invalid_input", fields: { report_id: expect.any(String) } });
      const theirs = await tokensFor("neighbour@example.com");
      const res = await mintDownloadToken(theirs.access_token, reports[0]!);
      expect(res.status).toBe(404);
    });
  });

  describe("proof of work that a cookie or a quiet moment cannot cheapen (issue 25, item 6)", () => {
    let attackerDevice: string;
    let ownerDevice: string;

    beforeAll(async () => {
      for (const name of ["attacker", "powvictim", "powowner"]) await createAccount(gate(), `${name}@example.com`, PASSWORD);
      attackerDevice = deviceCookieOf(await browserSignIn("attacker@example.com", PASSWORD))!;
      ownerDevice = deviceCookieOf(await browserSignIn("powowner@example.com", PASSWORD))!;
      expect(attackerDevice && ownerDevice).toBeTruthy();
    });

    async function challenge(device?: string) {
      const route = await import("@/app/api/altcha/challenge/route");
      const headers: Record<string, string> = { [PEER_HEADER]: freshAddress() };
      if (device) headers.cookie = `${DEVICE_COOKIE}=${device}`;
      const res = await route.GET(new NextRequest("http://localhost/api/altcha/challenge", { headers }));
      return res.json();
    }

    /** The hash budget under pressure (the level-3 band) for the duration of `run`. */
    async function underPressure<T>(run: () => Promise<T>): Promise<T> {
      const spy = vi.spyOn(gate().hashBudget, "recentPressure").mockReturnValue(0.9);
      try {
        return await run();
      } finally {
        spy.mockRestore();
      }
    }

    it("refuses a level-0 challenge that another account's device cookie fetched under pressure", async () => {
      await underPressure(async () => {
        const cheap = await challenge(attackerDevice);
        expect(cheap.parameters.data.level).toBe(0);
        current().checks.reset();
        const res = await browserSignIn("powvictim@example.com", PASSWORD, {
          fields: { altcha: await solve(cheap) },
          cookie: `${DEVICE_COOKIE}=${attackerDevice}`,
        });
        expect(res.status).toBe(400);
        expect(await res.json()).toMatchObject({ error: "captcha_invalid" });
        expect(current().checks.verified()).toBe(0);
      });
    });

    it("keeps the owner's own device on the base level under pressure", async () => {
      await underPressure(async () => {
        const cheap = await challenge(ownerDevice);
        expect(cheap.parameters.data.level).toBe(0);
        const res = await browserSignIn("powowner@example.com", PASSWORD, {
          fields: { altcha: await solve(cheap) },
          cookie: `${DEVICE_COOKIE}=${ownerDevice}`,
        });
        expect(res.status).toBe(200);
      });
    });

    it("refuses a challenge fetched in a quiet moment once the pressure has come, and takes one of the level due", async () => {
      const { issueChallenge } = await import("@/lib/captcha/altcha");
      // Fetched two minutes ago, before the pressure: still within its expiry.
      const quiet = await issueChallenge(gate().config.altcha, Date.now() - 120_000, 0);
      const stored = await solve(quiet);
      await underPressure(async () => {
        current().checks.reset();
        const res = await browserSignIn("powvictim@example.com", PASSWORD, { fields: { altcha: stored } });
        expect(res.status).toBe(400);
        expect(current().checks.verified()).toBe(0);
        const due = await challenge();
        expect(due.parameters.data.level).toBe(3);
        expect((await browserSignIn("powvictim@example.com", PASSWORD, { fields: { altcha: await solve(due) } })).status).toBe(200);
      });
    });
  });

  describe("behind a proxy that writes ports, with verification off (issue 25, items 2 and 7)", () => {
    const PROXY = "192.0.2.1";
    let database: TestDatabase;
    let proxied: Gate;

    beforeAll(async () => {
      database = await makeDatabase();
      proxied = await servedGatehouse(database.url, {
        TRUSTED_PROXIES: PROXY,
        REQUIRE_EMAIL_VERIFICATION: "false",
        // Small, so that the shared bucket of malformed hops fills in a few requests.
        RATE_LIMIT_SIGN_IN_ADDRESS: "3/15m",
      });
    });

    afterAll(async () => {
      await closeServed(proxied);
      await database?.dispose();
      // The suite's own instance serves the routes again.
      forget(APP_GATEHOUSE);
      await remember(APP_GATEHOUSE, async () => serve(gate()));
    });

    async function challengeVia(forwardedFor: string) {
      const route = await import("@/app/api/altcha/challenge/route");
      return route.GET(
        new NextRequest("http://localhost/api/altcha/challenge", { headers: { [PEER_HEADER]: PROXY, "x-forwarded-for": forwardedFor } }),
      );
    }

    /** Challenges until the per-address limit answers 429; how many were served. */
    async function servedUntilLimited(forwardedFor: string, max = 40) {
      for (let i = 0; i < max; i++) if ((await challengeVia(forwardedFor)).status === 429) return i;
      return max;
    }

    it("limits each client behind an ip:port proxy as itself, its port ignored", async () => {
      const served = await servedUntilLimited("203.0.113.7:40001");
      expect(served).toBeGreaterThan(0);
      expect(served).toBeLessThan(40);
      // The same client on another port is the same client; another client is not limited.
      expect((await challengeVia("203.0.113.7:40002")).status).toBe(429);
      expect((await challengeVia("203.0.113.7")).status).toBe(429);
      expect((await challengeVia("203.0.113.8:40001")).status).toBe(200);
      expect((await challengeVia("[2001:db8::7]:443")).status).toBe(200);
    });

    it("keys no malformed hop on the proxy's shared address, and says so loudly", async () => {
      const error = vi.spyOn(proxied.log, "error");
      const counted = async () =>
        ((await proxied.metrics.registry.getSingleMetric("gatehouse_forwarded_for_malformed_total")?.get())?.values ?? []).reduce(
          (sum, value) => sum + value.value,
          0,
        );
      try {
        const before = await counted();
        const statuses = [];
        for (let i = 0; i < 15; i++) statuses.push((await challengeVia("garbage-hop")).status);
        expect(statuses.every((status) => status === 200)).toBe(true);
        // A well-formed client after them is not in their bucket either.
        expect((await challengeVia("203.0.113.9")).status).toBe(200);
        expect((await counted()) - before).toBe(15);
        expect(error.mock.calls.some(([entry]) => (entry as { event?: string }).event === "forwarded_for_malformed")).toBe(true);
      } finally {
        error.mockRestore();
      }
    });

    // Issue 59: each malformed hop had a key of its own, so per-address limits did not apply to them.
    it("puts every malformed hop in one shared bucket for the sign-in limits, apart from well-formed clients", async () => {
      const viaHop = (hop: string, n: number) =>
        browserSignIn(`malformed-${n}@example.com`, "a wrong guess", { address: PROXY, headers: { "x-forwarded-for": hop } });
      const statuses = [];
      for (let n = 0; n < 4; n++) statuses.push((await viaHop(`garbage-${n}`, n)).status);
      expect(statuses).toEqual([401, 401, 401, 429]);
      // Another malformed hop is in the same bucket; a well-formed client behind the same proxy is not.
      expect((await viaHop("not an address", 9)).status).toBe(429);
      expect((await viaHop("203.0.113.44", 10)).status).toBe(401);
    });

    it("compose.yaml trusts its own network's gateway alone, not every Docker network", async () => {
      const fs = await import("node:fs");
      const text = fs.readFileSync("compose.yaml", "utf8");
      // Compose's ${VAR:-default}, resolved to the defaults, as `docker compose config` would.
      const resolved = text.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, "$1");
      const trusted = /^\s*TRUSTED_PROXIES:\s*(\S+)\s*$/m.exec(resolved)?.[1];
      const gateway = /^\s*gateway:\s*(\S+)\s*$/m.exec(resolved)?.[1];
      const subnet = /^\s*-\s*subnet:\s*(\S+)\s*$/m.exec(resolved)?.[1];
      expect(trusted).toBeDefined();
      expect(trusted).toBe(gateway);
      const { parseTrustedProxies } = await import("@/lib/http/client-address");
      const [range] = parseTrustedProxies(subnet);
      const ipaddr = (await import("ipaddr.js")).default;
      expect(ipaddr.parse(gateway!).match(range!.network, range!.prefixLength)).toBe(true);
      expect(parseTrustedProxies(trusted)).toHaveLength(1);
      expect(parseTrustedProxies(trusted)[0]!.prefixLength).toBe(32);
    });

    it("sends no confirmation mail when verification is off", async () => {
      const route = await import("@/app/api/register/route");
      const challengeRoute = await import("@/app/api/altcha/challenge/route");
      const altcha = await solve(
        await (
          await challengeRoute.GET(new Request("http://localhost/api/altcha/challenge", { headers: { [PEER_HEADER]: freshAddress() } }))
        ).json(),
      );
      const res = await route.POST(
        new Request("http://localhost/api/register", {
          method: "POST",
          headers: { "content-type": "application/json", [PEER_HEADER]: freshAddress() },
          body: JSON.stringify({ email: "unconfirmed@example.com", password: "a long enough passphrase here", altcha }),
        }),
      );
      expect(res.status).toBe(202);
      await proxied.background.idle();
      const user = await proxied.prisma.user.findUniqueOrThrow({ where: { email: "unconfirmed@example.com" } });
      expect(user.emailVerifiedAt).not.toBeNull();
      expect(await proxied.prisma.emailToken.count({ where: { userId: user.id } })).toBe(0);
      // Nothing at all was mailed: no link that could only ever answer invalid_token.
      expect((await proxied.metrics.mailSent.get()).values.reduce((sum, value) => sum + value.value, 0)).toBe(0);
    });
  });
}

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { NextRequest } from "next/server";
import type { ParsedMail } from "mailparser";
import { solve } from "../helpers/altcha";
import { browserSignIn as signInWith, createAccount, deviceCookieOf, sessionPairOf, type BrowserSignIn } from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse, testGatehouse } from "../helpers/instance";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";
import { linkTokenOf, recipientOf, startMailbox } from "../helpers/smtp";
import { watchPasswordChecks } from "../helpers/verifications";
import { onEachDatabase } from "../helpers/each-database";
import { testKeyPrefix } from "../helpers/redis";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the right passphrase";
const DEVICE = "gatehouse-device";

/**
 * The owner and the crowd (issue 55), as attack shapes through the real route handlers: an
 * office of owners behind one address is the normal case, so the budgets they share count what
 * only an attacker produces, and a known device has a lane of its own. Each case also shows that
 * the attacker it was made against is still held.
 */
export function crowdShapes(label: string, makeDatabase: () => Promise<TestDatabase>, settings: () => Record<string, string> = () => ({})) {
  describe(`the owner and the crowd on ${label}`, () => {
    let database: TestDatabase;
    let gate: Gate;
    let smtp: Awaited<ReturnType<typeof startMailbox>>;
    let checks: Awaited<ReturnType<typeof watchPasswordChecks>>;
    let n = 0;

    beforeAll(async () => {
      announcePeerHeader();
      database = await makeDatabase();
      smtp = await startMailbox();
      gate = await servedGatehouse(database.url, {
        ...smtp.settings,
        ...settings(),
        HASH_QUEUE: "200",
        // Every request of a test comes within a second or two; an office spreads its 9 am over minutes.
        RATE_LIMIT_ALTCHA_CHALLENGE: "600/1m,150/10s",
        // The office below: its people's own addresses, named by the operator.
        TRUSTED_NETWORKS: "203.0.113.0/24",
      });
      checks = await watchPasswordChecks(gate);
    });

    afterAll(async () => {
      await closeServed(gate);
      await smtp?.close();
      await database?.dispose();
    });

    beforeEach(() => checks.reset());

    /**
     * A sign-in as the page sends it: the challenge from the same address and browser (sized by
     * that address's failures and the device cookie), then the form.
     */
    async function browserSignIn(email: string, password: string, options: BrowserSignIn & { address: string }): Promise<Response> {
      const puzzle = await challenge(options.address, options.cookie);
      if (puzzle.status !== 200) return puzzle;
      return signInWith(email, password, { ...options, fields: { altcha: await solve(await puzzle.json()) } });
    }

    /** `count` accounts of their own for one test. */
    async function staff(count: number): Promise<string[]> {
      const emails = Array.from({ length: count }, () => `staff-${++n}@${label.replace(/\W+/g, "-").toLowerCase()}.example.com`);
      for (const email of emails) await createAccount(gate, email, PASSWORD);
      return emails;
    }

    /** Signs `email` in once from `address` and keeps the device cookie that sign-in left (`name=value`). */
    async function knownDevice(email: string, address = freshAddress()): Promise<string> {
      const res = await browserSignIn(email, PASSWORD, { address });
      expect(res.status).toBe(200);
      return `${DEVICE}=${deviceCookieOf(res)!}`;
    }

    /** A POST with no body at all, as a broken or hostile client sends it. */
    async function bodyless(address: string, cookie?: string): Promise<Response> {
      const route = await import("@/app/api/auth/callback/credentials/route");
      return route.POST(
        new NextRequest("http://localhost/api/auth/callback/credentials", {
          method: "POST",
          headers: { [PEER_HEADER]: address, ...(cookie ? { cookie } : {}) },
        }),
      );
    }

    async function challenge(address: string, cookie?: string): Promise<Response> {
      const route = await import("@/app/api/altcha/challenge/route");
      return route.GET(
        new NextRequest("http://localhost/api/altcha/challenge", { headers: { [PEER_HEADER]: address, ...(cookie ? { cookie } : {}) } }),
      );
    }

    async function settled() {
      await gate.background.idle();
      await gate.mailer.idle();
    }

    function mailsTo(email: string, subject: RegExp): ParsedMail[] {
      return smtp.received.filter((mail) => recipientOf(mail) === email && subject.test(mail.subject ?? ""));
    }

    describe("the office at 9 am", () => {
      it("lets 60 owners in from one address with no device: the address's budget counts failures, not successes", async () => {
        const office = freshAddress();
        const people = await staff(60);
        const statuses = [];
        for (const email of people) statuses.push((await browserSignIn(email, PASSWORD, { address: office })).status);
        expect(statuses.filter((status) => status === 200)).toHaveLength(60);
      });

      it("still stops spraying: the 31st wrong password across accounts from one address is refused before any check", async () => {
        const sprayer = freshAddress();
        const targets = await staff(35);
        const statuses = [];
        for (const email of targets) statuses.push((await browserSignIn(email, "Summer2026!", { address: sprayer })).status);
        expect(statuses.slice(0, 30).every((status) => status === 401)).toBe(true);
        expect(statuses.slice(30).every((status) => status === 429)).toBe(true);
        expect(checks.verified()).toBe(30);
      });

      it("lets a known device in after a guest spent the address's sign-in budget and body-less POSTs", async () => {
        const office = freshAddress();
        const [owner, ...guessed] = await staff(8);
        const cookie = await knownDevice(owner!, office);
        // A guest at the same address: wrong passwords on several accounts, then body-less POSTs.
        for (const email of guessed) for (let i = 0; i < 4; i++) await browserSignIn(email, `guess ${i}`, { address: office });
        for (let i = 0; i < 30; i++) await bodyless(office);
        expect((await browserSignIn("newcomer@example.com", PASSWORD, { address: office })).status).toBe(429);
        checks.reset();
        const res = await browserSignIn(owner!, PASSWORD, { address: office, cookie });
        expect(res.status).toBe(200);
        expect(checks.verified()).toBe(1);
      });

      it("counts malformed and body-less requests as the address's failures, with or without a device cookie", async () => {
        const office = freshAddress();
        const [owner] = await staff(1);
        const cookie = await knownDevice(owner!, office);
        // A body-less POST with the cookie reaches no account: it pays the address on its way out.
        for (let i = 0; i < 15; i++) expect((await bodyless(office, cookie)).status).toBe(415);
        for (let i = 0; i < 15; i++) expect((await bodyless(office)).status).toBe(415);
        const refused = await bodyless(office);
        expect(refused.status).toBe(429);
        expect(refused.headers.get("Retry-After")).not.toBeNull();
      });

      it("does not let one account's device cookie pass the address's limit for another account", async () => {
        const office = freshAddress();
        const [attacker, ...victims] = await staff(32);
        const cookie = await knownDevice(attacker!, freshAddress());
        const statuses = [];
        for (const email of victims.slice(0, 10))
          statuses.push((await browserSignIn(email, "a guess", { address: office, cookie })).status);
        for (const email of victims.slice(10)) statuses.push((await browserSignIn(email, "a guess", { address: office })).status);
        // The cookie's 10 were the address's (refused as a stranger's: wrong password, or the proof of
        // work sized for a known device and spent by none of this account's): 20 more fill its 30.
        expect(statuses.slice(0, 30).every((status) => status === 401 || status === 400)).toBe(true);
        expect(statuses[30]).toBe(429);
      });

      it("charges a revoked device's sign-in to the address", async () => {
        const office = freshAddress();
        const [owner, ...guessed] = await staff(31);
        const cookie = await knownDevice(owner!, office);
        await gate.devices.forgetAll(gate.usernameKey(owner!));
        for (const email of guessed.slice(0, 29)) await browserSignIn(email, "a guess", { address: office });
        // The 30th of the address's budget goes to the revoked device's failed try, the 31st is refused.
        expect((await browserSignIn(owner!, "a guess", { address: office, cookie })).status).toBe(401);
        expect((await browserSignIn(guessed[29]!, PASSWORD, { address: office })).status).toBe(429);
      });

      it("gives a guest guessing one account 5 checks, and the office's newcomers their budget", async () => {
        const office = freshAddress();
        const [victim, ...newcomers] = await staff(11);
        for (let i = 0; i < 60; i++) await browserSignIn(victim!, `guess ${i}`, { address: office });
        expect(checks.verified()).toBeLessThanOrEqual(5);
        const statuses = [];
        for (const email of newcomers) statuses.push((await browserSignIn(email, PASSWORD, { address: office })).status);
        expect(statuses).toEqual(newcomers.map(() => 200));
      });

      it("gives a known device its own lane past the address's challenge limit", async () => {
        const office = freshAddress();
        const [owner] = await staff(1);
        const cookie = await knownDevice(owner!, office);
        let refused = 0;
        for (let i = 0; i < 200 && refused === 0; i++) if ((await challenge(office)).status === 429) refused++;
        expect(refused).toBe(1);
        expect((await challenge(office)).status).toBe(429);
        expect((await challenge(office, cookie)).status).toBe(200);
      });

      it("does not make one account's right password, sent in a loop, free for its address", async () => {
        const address = freshAddress();
        const [owner] = await staff(1);
        const statuses = [];
        for (let i = 0; i < 12; i++) statuses.push((await browserSignIn(owner!, PASSWORD, { address })).status);
        // 5 successes are given back (successRefunds), then each spends the per-username limit's 5.
        expect(statuses.slice(0, 10)).toEqual(Array(10).fill(200));
        expect(statuses.slice(10)).toEqual([429, 429]);
      });

      it("lets a flood the per-username limit refuses spend the address after its refunds, so the fast path takes it", async () => {
        const address = freshAddress();
        const [victim] = await staff(1);
        const bodies = [];
        for (let i = 0; i < 100; i++) bodies.push(await (await browserSignIn(victim!, `guess ${i}`, { address })).json());
        const scopes = bodies.slice(5).map((body: { error?: string; scope?: string }) => body.scope ?? body.error);
        // 5 checked; 60 refusals by the username limit given back (refusalRefunds), then 30 spend the
        // address, whose own refusal (no scope) follows, and the fast path may answer it.
        expect(scopes.slice(0, 60).every((scope) => scope === "username")).toBe(true);
        expect(scopes.at(-1)).toBe("rate_limited");
        expect(checks.verified()).toBe(5);
      });

      it("charges a replaced device cookie's challenge to the address", async () => {
        const office = freshAddress();
        const [owner] = await staff(1);
        const stale = await knownDevice(owner!, freshAddress());
        // Signing in again replaces the device: the old cookie's signature still holds, its device is gone.
        await browserSignIn(owner!, PASSWORD, { address: freshAddress(), cookie: stale });
        let refused = 0;
        for (let i = 0; i < 200 && refused === 0; i++) if ((await challenge(office, stale)).status === 429) refused++;
        expect(refused).toBe(1);
      });

      it("gives an address in TRUSTED_NETWORKS a larger allowance, never past the per-username limit or the lockout", async () => {
        const office = "203.0.113.9";
        const people = await staff(40);
        // 40 wrong passwords across accounts: past the 30 any other address gets.
        const statuses = [];
        for (const email of people) statuses.push((await browserSignIn(email, "a guess", { address: office })).status);
        expect(statuses.every((status) => status === 401)).toBe(true);
        // The per-username limit and the lockout hold as anywhere.
        const [victim] = people;
        const more = [];
        for (let i = 0; i < 6; i++) more.push((await browserSignIn(victim!, `guess ${i}`, { address: office })).status);
        expect(more.at(-1)).toBe(429);
        const locked = await gate.lockouts.check(gate.usernameKey(victim!), Date.now(), gate.lockoutPolicy);
        expect(locked.locked).toBe(true);
      });
    });

    describe("the owner who mistyped", () => {
      it("follows the unlock mail and signs in at once, whatever the typos spent; the banner says so", async () => {
        const [owner] = await staff(1);
        const home = freshAddress();
        const answers = [];
        for (let i = 0; i < 6; i++) answers.push(await browserSignIn(owner!, `typo ${i}`, { address: home }));
        const sixth = answers.at(-1)!;
        expect(sixth.status).toBe(429);
        expect(await sixth.json()).toMatchObject({ error: "rate_limited", scope: "username" });
        await settled();
        const [mail] = mailsTo(owner!, /paused/i);
        expect(mail).toBeDefined();
        const unlock = await import("@/app/api/unlock/route");
        const unlocked = await unlock.POST(
          new NextRequest("http://localhost/api/unlock", {
            method: "POST",
            headers: { "content-type": "application/json", [PEER_HEADER]: home },
            body: JSON.stringify({ token: linkTokenOf(mail!) }),
          }),
        );
        expect(unlocked.status).toBe(200);
        const res = await browserSignIn(owner!, PASSWORD, { address: home, cookie: `${DEVICE}=${deviceCookieOf(unlocked)!}` });
        expect(res.status).toBe(200);
        expect(sessionPairOf(res)).not.toBeNull();
      });

      it("'Email me a new link' sends one while the per-username limit holds after the lock itself has ended", async () => {
        const [owner] = await staff(1);
        const home = freshAddress();
        for (let i = 0; i < 5; i++) await browserSignIn(owner!, `typo ${i}`, { address: home });
        await settled();
        const before = mailsTo(owner!, /paused/i).length;
        // The 60 s lock is over; the failures are still counted.
        await gate.prisma.signInLockout.update({
          where: { usernameKey: gate.usernameKey(owner!) },
          data: { lockedUntil: new Date(Date.now() - 1_000) },
        });
        const { altchaPayload } = await import("../helpers/browser");
        const request = await import("@/app/api/unlock/request/route");
        const asked = await request.POST(
          new NextRequest("http://localhost/api/unlock/request", {
            method: "POST",
            headers: { "content-type": "application/json", [PEER_HEADER]: home },
            body: JSON.stringify({ email: owner, altcha: await altchaPayload() }),
          }),
        );
        expect(asked.status).toBe(202);
        await settled();
        expect(mailsTo(owner!, /paused/i)).toHaveLength(before + 1);
      });
    });

    it("refuses to start with a TRUSTED_NETWORKS value that is no network, naming it", async () => {
      const other = await makeDatabase();
      try {
        await expect(testGatehouse(other.url, { TRUSTED_NETWORKS: "198.51.100.0/24,office" })).rejects.toThrow(/TRUSTED_NETWORKS/);
        await expect(testGatehouse(other.url, { TRUSTED_NETWORKS: "10.0.0.1/8" })).rejects.toThrow(/TRUSTED_NETWORKS.*host bits/);
      } finally {
        await other.dispose();
      }
    });
  });
}

// The memory limiter on PGlite (one instance); Redis beside PostgreSQL, as several instances share it.
onEachDatabase(
  "the owner and the crowd",
  ({ label, makeDatabase, redisUrl }) =>
    redisUrl
      ? crowdShapes(`${label}, Redis limiter`, makeDatabase, () => ({
          RATE_LIMIT_STORE: "redis",
          REDIS_URL: redisUrl,
          RATE_LIMIT_KEY_PREFIX: testKeyPrefix(),
        }))
      : crowdShapes(`${label}, memory limiter`, makeDatabase),
  { needs: ["redis"] },
);

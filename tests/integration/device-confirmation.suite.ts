import { NextRequest } from "next/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { totpCodeAt } from "@/lib/factors/totp";
import {
  browserSignIn,
  comparableAnswer,
  createAccount,
  deviceCookieOf,
  refreshTokens,
  sessionPairOf,
  sessionWith,
  tokenSignIn,
} from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";
import { startRangeServer } from "../helpers/range-server";
import { deviceCodeMails, otherCode, pendingCookieOf, secondStepPost } from "../helpers/pending";
import { recipientOf, startMailbox } from "../helpers/smtp";
import { onEachDatabase } from "../helpers/each-database";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the owner's own passphrase";
const WRONG = "a stuffed password from elsewhere";

/**
 * A right password from a new device of an account under attack is not enough: through the real
 * route handlers, a real database and a real SMTP server. The code is mailed only for a right
 * password, and every answer before it is the same for a right one, a wrong one and an address
 * with no account; the code is good once, for its own pending sign-in and browser; the owner's
 * known devices, passkeys and factors go straight past it.
 */
export function deviceConfirmationSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`device confirmation on ${label}`, () => {
    let database: TestDatabase;
    let gate: Gate;
    let smtp: Awaited<ReturnType<typeof startMailbox>>;

    const serve = async (settings: Record<string, string> = {}) => {
      await closeServed(gate);
      gate = await servedGatehouse(database.url, { ...smtp.settings, HASH_QUEUE: "100", ...settings });
    };

    beforeAll(async () => {
      announcePeerHeader();
      database = await makeDatabase();
      smtp = await startMailbox();
      await serve();
    });
    afterAll(async () => {
      await closeServed(gate);
      await smtp?.close();
      await database?.dispose();
    });

    const { codeMails, mailedCode } = deviceCodeMails(
      () => gate,
      () => smtp.received,
    );
    const pendingOf = pendingCookieOf;
    const browserStep = (pendingCookie: string | null, body: unknown) => secondStepPost(pendingCookie, body);
    async function apiPost(path: string, body: unknown) {
      const route = (await import(`@/app${path}/route`)) as { POST: (request: NextRequest) => Promise<Response> };
      return route.POST(
        new NextRequest(`http://localhost${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", [PEER_HEADER]: freshAddress() },
          body: typeof body === "string" ? body : JSON.stringify(body),
        }),
      );
    }
    const confirmDevice = (body: unknown) => apiPost("/api/v1/authentication/token/confirm-device", body);

    /** A stranger's wrong password: the username is under attack from now on. */
    const strangerFails = async (email: string) => expect((await tokenSignIn(email, WRONG)).status).toBe(401);

    it("a right password from a new device, after a stranger's failure: no session, a mailed code, then a known device", async () => {
      await createAccount(gate, "owner@example.com", PASSWORD);
      await strangerFails("owner@example.com");

      const res = await browserSignIn("owner@example.com", PASSWORD);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: "device_confirmation_required", methods: ["email_code"] });
      expect(sessionPairOf(res)).toBeNull();
      expect(deviceCookieOf(res)).toBeNull();
      const pending = pendingOf(res);
      expect(pending).not.toBeNull();
      const code = await mailedCode("owner@example.com");
      expect((await codeMails("owner@example.com"))[0]!.text).toMatch(
        /valid\s+until\s+\d\d:\d\d\s+\(UTC\)\s+and\s+ends\s+once\s+it\s+has\s+finished\s+a\s+sign-in/,
      );

      // Issue 59: each success logged route_limit_skipped at error, which teaches operators to ignore it.
      const errors = vi.spyOn(gate.log, "error");
      const done = await browserStep(pending, { code, callbackUrl: "/account" });
      expect(done.status, await done.clone().text()).toBe(200);
      expect(await done.json()).toMatchObject({ url: "http://localhost:3000/account" });
      expect(errors.mock.calls.map(([entry]) => (entry as { event?: string }).event)).not.toContain("route_limit_skipped");
      errors.mockRestore();
      const session = sessionPairOf(done);
      expect((await sessionWith(session!)).body).toMatchObject({ user: { email: "owner@example.com" } });
      const device = deviceCookieOf(done);
      expect(device).not.toBeNull();
      // Good once.
      expect((await browserStep(pending, { code })).status).toBe(401);

      // The confirmed browser is a known device: under a new attack it goes straight in, and mails nothing.
      await strangerFails("owner@example.com");
      const again = await browserSignIn("owner@example.com", PASSWORD, { cookie: `gatehouse-device=${device}` });
      expect(again.status).toBe(200);
      expect(await codeMails("owner@example.com")).toHaveLength(1);
      const userId = (await gate.prisma.user.findUniqueOrThrow({ where: { email: "owner@example.com" } })).id;
      const kinds = (await gate.events.recent(userId, 20)).map((event) => event.kind);
      expect(kinds).toContain("device_confirmation_due");
    });

    it("answers a wrong password, a right one and an address with no account alike; mails the code only for the right one", async () => {
      await createAccount(gate, "alike@example.com", PASSWORD);
      for (const email of ["alike@example.com", "nobody@example.com"]) await strangerFails(email);
      const answers = [];
      for (const [email, password] of [
        ["alike@example.com", WRONG],
        ["alike@example.com", PASSWORD],
        ["nobody@example.com", PASSWORD],
      ] as const) {
        for (const res of [await browserSignIn(email, password), await tokenSignIn(email, password)]) {
          expect(sessionPairOf(res)).toBeNull();
          answers.push([res.status, comparableAnswer(await res.json())]);
        }
      }
      // Browser and API alike too (each carries its pending sign-in its own way: a cookie, a token).
      expect(new Set(answers.map((answer) => JSON.stringify(answer))).size, JSON.stringify(answers)).toBe(1);
      expect(answers[0]).toMatchObject([401, { error: "device_confirmation_required" }]);
      // Two right passwords (browser, API) in one code window: one mail, whose code both pending
      // sign-ins wait for (one code per account and window, lib/factors/device-confirmation.ts).
      expect(await codeMails("alike@example.com")).toHaveLength(1);
      expect(smtp.received.filter((mail) => recipientOf(mail) === "nobody@example.com")).toHaveLength(0);
    });

    it("the token API: 401 with a confirmation_token, the code at its route, then tokens and a device_token", async () => {
      await createAccount(gate, "app@example.com", PASSWORD);
      await strangerFails("app@example.com");
      const res = await tokenSignIn("app@example.com", PASSWORD);
      expect(res.status).toBe(401);
      const body = (await res.json()) as { error: string; confirmation_token: string; expires_in: number };
      expect(body).toMatchObject({ error: "device_confirmation_required", methods: ["email_code"] });
      expect(body).not.toHaveProperty("access_token");
      expect(body.expires_in).toBeGreaterThan(590);
      const code = await mailedCode("app@example.com");

      // Not the second step's route, not the browser's, not the wrong shape.
      expect((await apiPost("/api/v1/authentication/token/mfa", { mfa_token: body.confirmation_token, code })).status).toBe(401);
      expect((await browserStep(`gatehouse-pending-sign-in=${body.confirmation_token}`, { code })).status).toBe(401);
      expect((await confirmDevice({ confirmation_token: body.confirmation_token, code: "12345" })).status).toBe(400);
      expect((await confirmDevice({ confirmation_token: body.confirmation_token, code: [code] })).status).toBe(400);
      expect((await confirmDevice("{not json")).status).toBe(400);

      const done = await confirmDevice({ confirmation_token: body.confirmation_token, code });
      expect(done.status, await done.clone().text()).toBe(200);
      const tokens = (await done.json()) as { access_token: string; refresh_token: string; device_token: string };
      expect(tokens.access_token).toBeTruthy();
      expect((await refreshTokens(tokens.refresh_token)).status).toBe(200);
      // The app is a known device now.
      await strangerFails("app@example.com");
      expect((await tokenSignIn("app@example.com", PASSWORD, { deviceToken: tokens.device_token })).status).toBe(200);
    });

    it("a wrong code: tries left, then the pending sign-in ends; a stand-in counts down alike", async () => {
      await createAccount(gate, "tries@example.com", PASSWORD);
      // Each on a username of its own: the username's lock on wrong codes would otherwise count both.
      for (const email of ["tries@example.com", "tries-nobody@example.com"]) await strangerFails(email);
      const right = await tokenSignIn("tries@example.com", PASSWORD);
      const standIn = await tokenSignIn("tries-nobody@example.com", PASSWORD);
      const code = await mailedCode("tries@example.com");
      const tokens = [right, standIn].map(async (res) => ((await res.json()) as { confirmation_token: string }).confirmation_token);
      const [realToken, standInToken] = await Promise.all(tokens);
      const shape = ({ retryAfterSeconds, ...rest }: Record<string, unknown>) => ({ ...rest, locks: retryAfterSeconds !== undefined });
      for (let n = 1; n <= 5; n++) {
        const real = await confirmDevice({ confirmation_token: realToken, code: otherCode(code) });
        const fake = await confirmDevice({ confirmation_token: standInToken, code: otherCode(code) });
        expect(real.status).toBe(401);
        const body = shape(await real.json());
        expect(body).toMatchObject({ error: "invalid_code", triesLeft: 5 - n });
        expect([fake.status, shape(await fake.json())]).toEqual([401, body]);
      }
      // The sixth try, even with the right code, finds nothing to finish.
      const sixth = await confirmDevice({ confirmation_token: realToken, code });
      expect(sixth.status).toBe(401);
      expect(await sixth.json()).toMatchObject({ error: "second_step_invalid", reason: "tries" });
      expect(await confirmDevice({ confirmation_token: standInToken, code })).toMatchObject({ status: 401 });
    });

    it("a code raced in parallel signs in once, on one pending sign-in; another account's code does not work", async () => {
      await createAccount(gate, "race@example.com", PASSWORD);
      await createAccount(gate, "race-other@example.com", PASSWORD);
      for (const email of ["race@example.com", "race-other@example.com"]) await strangerFails(email);
      const held = vi.spyOn(gate.mailer, "hold");
      const first = pendingOf(await browserSignIn("race@example.com", PASSWORD));
      const code = await mailedCode("race@example.com");
      // The promise spooled before the answer names the code's window, never the code.
      expect(held).toHaveBeenCalledWith("device_code", expect.objectContaining({ do: "device_code" }));
      expect(JSON.stringify(held.mock.calls)).not.toContain(code);
      held.mockRestore();
      const second = pendingOf(await browserSignIn("race@example.com", PASSWORD));
      // The window's code is in the mailbox already: no second mail, and it is the second's code too.
      expect(await codeMails("race@example.com")).toHaveLength(1);
      expect((await browserSignIn("race-other@example.com", PASSWORD)).status).toBe(401);
      const otherAccountsCode = await mailedCode("race-other@example.com");
      if (otherAccountsCode !== code) {
        const crossed = await browserStep(second, { code: otherAccountsCode });
        expect(crossed.status).toBe(401);
        expect(await crossed.json()).toMatchObject({ error: "invalid_code" });
      }

      const raced = await Promise.all(Array.from({ length: 8 }, () => browserStep(first, { code })));
      expect(raced.filter((res) => res.status === 200)).toHaveLength(1);
      expect(raced.filter((res) => sessionPairOf(res) !== null)).toHaveLength(1);
      // The code finished a sign-in, so it finishes no other, even one that waited for it in its
      // window (record 40): that one signs in again, for a fresh code.
      const again = await Promise.all(Array.from({ length: 4 }, () => browserStep(second, { code })));
      expect(again.filter((res) => sessionPairOf(res) !== null)).toHaveLength(0);
      expect(again.map((res) => res.status)).toEqual([401, 401, 401, 401]);
    });

    it("a confirmed device's cookie is no known device of another account", async () => {
      await createAccount(gate, "mine@example.com", PASSWORD);
      await createAccount(gate, "theirs@example.com", PASSWORD);
      const mine = await browserSignIn("mine@example.com", PASSWORD);
      expect(mine.status).toBe(200);
      const device = deviceCookieOf(mine);
      await strangerFails("theirs@example.com");
      const replayed = await browserSignIn("theirs@example.com", PASSWORD, { cookie: `gatehouse-device=${device}` });
      expect(replayed.status).toBe(401);
      expect(await replayed.json()).toMatchObject({ error: "device_confirmation_required" });
    });

    it("an account with a second factor waits for the code, then its factor; an unlock link's browser is a known device", async () => {
      const userId = await createAccount(gate, "factor@example.com", PASSWORD);
      const secret = (await gate.factors.beginTotp(userId, "setup-session", Date.now()))!;
      expect(await gate.factors.confirmTotp(userId, "setup-session", totpCodeAt(secret, Date.now() - 30_000), Date.now())).toBe(true);
      await strangerFails("factor@example.com");
      // The password step answers as it answers a wrong password (tests/integration/attack-shapes.suite.ts).
      const res = await browserSignIn("factor@example.com", PASSWORD);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: "device_confirmation_required" });
      // The mailed code proves the mailbox; the factor is asked next, never skipped.
      const confirmed = await browserStep(pendingOf(res), { code: await mailedCode("factor@example.com") });
      expect(confirmed.status).toBe(401);
      expect(await confirmed.json()).toMatchObject({ error: "mfa_required", methods: expect.arrayContaining(["totp"]) });
      expect(sessionPairOf(confirmed)).toBeNull();
      const factorPending = pendingOf(confirmed);
      expect(factorPending).not.toBeNull();
      expect((await browserStep(pendingOf(res), { code: "123456" })).status).toBe(401);
      const done = await browserStep(factorPending, { code: totpCodeAt(secret, Date.now()) });
      expect(done.status, await done.clone().text()).toBe(200);
      expect(sessionPairOf(done)).not.toBeNull();

      // The token API alike: confirm-device answers mfa_required with an mfa_token, and no tokens.
      await strangerFails("factor@example.com");
      const api = await tokenSignIn("factor@example.com", PASSWORD);
      const { confirmation_token } = (await api.json()) as { confirmation_token: string };
      const apiConfirmed = await confirmDevice({ confirmation_token, code: await mailedCode("factor@example.com") });
      expect(apiConfirmed.status).toBe(401);
      const apiBody = (await apiConfirmed.json()) as Record<string, unknown>;
      expect(apiBody).toMatchObject({ error: "mfa_required", mfa_token: expect.any(String) });
      expect(apiBody).not.toHaveProperty("access_token");

      // An unlock link proves the mailbox, as the code would: its browser is a known device.
      const unlockUser = await createAccount(gate, "unlock@example.com", PASSWORD);
      await strangerFails("unlock@example.com");
      const user = await gate.prisma.user.findUniqueOrThrow({ where: { id: unlockUser } });
      const token = await gate.emailTokens.issue(unlockUser, "unlock", user.credentialGeneration, Date.now(), 600_000);
      const unlocked = await apiPost("/api/unlock", { token });
      expect(unlocked.status, await unlocked.clone().text()).toBe(200);
      const device = deviceCookieOf(unlocked);
      expect((await browserSignIn("unlock@example.com", PASSWORD, { cookie: `gatehouse-device=${device}` })).status).toBe(200);
    });

    // An attacker's review of this change found these shapes; each test failed before its fix.
    describe("what an attacker could read from the step, and what wore it away", () => {
      /** The level the challenge route signs into this address's next ALTCHA challenge. */
      async function challengeLevelAt(address: string): Promise<number> {
        const { GET } = await import("@/app/api/altcha/challenge/route");
        const res = await GET(new NextRequest("http://localhost/api/altcha/challenge", { headers: { [PEER_HEADER]: address } }));
        return Number(/"level":(\d)/.exec(JSON.stringify(await res.json()))?.[1]);
      }

      it("the next ALTCHA challenge's level does not tell a right password from a wrong one", async () => {
        await createAccount(gate, "level@example.com", PASSWORD);
        await strangerFails("level@example.com");
        const levels: Record<string, number> = {};
        for (const [label, password] of [
          ["right", PASSWORD],
          ["wrong", WRONG],
        ] as const) {
          const address = freshAddress();
          // Two failures from this address elsewhere: one short of the next level (3).
          for (let i = 0; i < 2; i++)
            expect((await tokenSignIn(`throwaway-${label}-${i}@example.com`, WRONG, { address })).status).toBe(401);
          expect(await tokenSignIn("level@example.com", password, { address })).toMatchObject({ status: 401 });
          levels[label] = await challengeLevelAt(address);
        }
        expect(levels.right, JSON.stringify(levels)).toBe(levels.wrong);
      });

      it("the owner's confirmed device does not end 'under attack': the next stuffer still waits for a code", async () => {
        await createAccount(gate, "after@example.com", PASSWORD);
        await strangerFails("after@example.com");
        const owner = await browserSignIn("after@example.com", PASSWORD);
        expect((await browserStep(pendingOf(owner), { code: await mailedCode("after@example.com") })).status).toBe(200);
        const stuffer = await tokenSignIn("after@example.com", PASSWORD);
        const body = (await stuffer.json()) as Record<string, unknown>;
        expect(body, JSON.stringify(body)).not.toHaveProperty("access_token");
        expect(body).toMatchObject({ error: "device_confirmation_required" });
      });

      it("whether a username is still under attack does not tell an account from no account", async () => {
        await createAccount(gate, "probed@example.com", PASSWORD);
        const probe = async (email: string) => comparableAnswer(await (await tokenSignIn(email, WRONG)).json());
        for (const email of ["probed@example.com", "probed-nobody@example.com"]) await probe(email);
        const owner = await browserSignIn("probed@example.com", PASSWORD);
        expect((await browserStep(pendingOf(owner), { code: await mailedCode("probed@example.com") })).status).toBe(200);
        expect(await probe("probed@example.com")).toEqual(await probe("probed-nobody@example.com"));
      });

      it("wrong codes count on the username's lock for strangers, across its pending sign-ins, and a stand-in's alike", async () => {
        await createAccount(gate, "guess@example.com", PASSWORD);
        await strangerFails("guess@example.com");
        const usernameKey = gate.usernameKey("guess@example.com");
        const failures = async () => (await gate.prisma.signInLockout.findUnique({ where: { usernameKey } }))?.failureCount ?? 0;
        const statuses: Record<string, number[]> = {};
        const counted: Record<string, number> = {};
        for (const password of [PASSWORD, WRONG]) {
          await gate.lockouts.reset(usernameKey);
          // Three pending sign-ins (counted password checks), four wrong codes each, of which each
          // pending sign-in's first counts (record 20): past the threshold, and none refused, since
          // each pending sign-in's own tries bound its guesses.
          const tokens = [];
          for (let i = 0; i < 3; i++)
            tokens.push(
              ((await (await tokenSignIn("guess@example.com", password)).json()) as { confirmation_token: string }).confirmation_token,
            );
          statuses[password] = [];
          for (const token of tokens)
            for (let i = 0; i < 4; i++)
              statuses[password].push((await confirmDevice({ confirmation_token: token, code: "000000" })).status);
          counted[password] = await failures();
        }
        expect(statuses[PASSWORD]).toEqual(Array(12).fill(401));
        expect(statuses[PASSWORD]).toEqual(statuses[WRONG]);
        expect(counted).toEqual({ [PASSWORD]: 6, [WRONG]: 6 });
        expect((await gate.lockouts.check(usernameKey, Date.now(), gate.config.lockout)).locked).toBe(true);
      });

      it("a real pending sign-in and a stand-in answer alike after the owner signs out everywhere", async () => {
        const userId = await createAccount(gate, "alarmed@example.com", PASSWORD);
        await strangerFails("alarmed@example.com");
        const tokenFor = async (password: string) =>
          ((await (await tokenSignIn("alarmed@example.com", password)).json()) as { confirmation_token: string }).confirmation_token;
        const [real, fake] = [await tokenFor(PASSWORD), await tokenFor(WRONG)];
        await gate.prisma.user.update({ where: { id: userId }, data: { credentialGeneration: { increment: 1 } } });
        const a = await confirmDevice({ confirmation_token: real, code: "123456" });
        const b = await confirmDevice({ confirmation_token: fake, code: "123456" });
        expect([a.status, await a.json()]).toEqual([b.status, await b.json()]);
      });

      /** `work` on an instance whose breach corpus holds `leaked`; the suite's own instance afterwards. */
      async function withCorpus(leaked: string, work: () => Promise<void>) {
        const ranges = await startRangeServer([leaked]);
        try {
          await serve({ BREACHED_PASSWORDS_URL: `${ranges.base}/ok` });
          await work();
        } finally {
          await serve();
          await ranges.close();
        }
      }

      it("a stuffer's first try of a leaked pair on a quiet username: right and wrong answer alike", async () => {
        const LEAKED = "velvet harbour quince 1931";
        await withCorpus(LEAKED, async () => {
          await createAccount(gate, "leaked@example.com", LEAKED);
          await createAccount(gate, "not-leaked@example.com", PASSWORD);
          const right = await tokenSignIn("leaked@example.com", LEAKED);
          const wrong = await tokenSignIn("not-leaked@example.com", LEAKED);
          const answers = [
            [right.status, comparableAnswer(await right.json())],
            [wrong.status, comparableAnswer(await wrong.json())],
          ];
          expect(answers[0], JSON.stringify(answers)).toEqual(answers[1]);
          expect(answers[0]).toMatchObject([401, { error: "device_confirmation_required" }]);
          // Only the right one is marked, and only its owner gets a code.
          expect(await codeMails("leaked@example.com")).toHaveLength(1);
          expect(await codeMails("not-leaked@example.com")).toHaveLength(0);
        });
      });

      // Issue 59: the confirmed browser landed on its callback ("/"), not where docs/passwords.md says.
      it("a breached right password confirmed by the mailed code lands on choosing a new password", async () => {
        const LEAKED = "quartz meadow lantern 4417";
        await withCorpus(LEAKED, async () => {
          await createAccount(gate, "leaked-browser@example.com", LEAKED);
          const res = await browserSignIn("leaked-browser@example.com", LEAKED);
          expect(res.status).toBe(401);
          const done = await browserStep(pendingOf(res), { code: await mailedCode("leaked-browser@example.com"), callbackUrl: "/account" });
          expect(done.status, await done.clone().text()).toBe(200);
          expect(await done.json()).toMatchObject({ url: "http://localhost:3000/account/new-password" });
        });
      });

      it("a refused attempt, locked or busy, spends no breach look-up; an admitted one does", async () => {
        const ranges = await startRangeServer([]);
        try {
          // One Argon2id at a time and no queue: a second sign-in while one is hashed is busy.
          await serve({ BREACHED_PASSWORDS_URL: `${ranges.base}/ok`, HASH_CONCURRENCY: "1", HASH_QUEUE: "0", HASH_TRUSTED_SLOTS: "0" });
          await createAccount(gate, "refused@example.com", PASSWORD);
          // Each look-up is one range request (these passwords' prefixes are not cached).
          const lookups = vi.spyOn(gate.breachedPasswords, "check");
          const lookedUp = (password: string) => lookups.mock.calls.some(([asked]) => asked === password);

          // Busy: the first attempt holds the only slot inside Argon2id; the second gets 503.
          let release!: () => void;
          let reached!: () => void;
          const released = new Promise<void>((resolve) => (release = resolve));
          const inside = new Promise<void>((resolve) => (reached = resolve));
          const verify = gate.hasher.verify.bind(gate.hasher);
          vi.spyOn(gate.hasher, "verify").mockImplementationOnce(async (...args) => {
            reached();
            await released;
            return verify(...args);
          });
          const holder = tokenSignIn("refused@example.com", "the first stranger's guess");
          await inside;
          const busy = await tokenSignIn("refused@example.com", "the busy stranger's guess");
          release();
          expect(busy.status).toBe(503);
          expect((await holder).status).toBe(401);
          expect(lookedUp("the first stranger's guess")).toBe(true);
          expect(lookedUp("the busy stranger's guess")).toBe(false);

          // Locked: the username's lock, met inside the slot (the check before it raced a failure).
          for (let i = 0; i < gate.config.lockout.threshold; i++) await tokenSignIn("refused@example.com", `guess number ${i}`);
          // The check saw no row at all: the count's insert misses the row the failures wrote, and it reads again.
          const usernameKey = gate.usernameKey("refused@example.com");
          vi.spyOn(gate.lockouts, "check").mockResolvedValueOnce({ locked: false, seen: { usernameKey, row: null } });
          const locked = await tokenSignIn("refused@example.com", "the locked stranger's guess");
          expect(locked.status).toBe(429);
          expect(lookedUp("the locked stranger's guess")).toBe(false);
        } finally {
          vi.restoreAllMocks();
          await serve();
          await ranges.close();
        }
      });
    });

    it("within one code window a right password asked again answers alike and mails no second code", async () => {
      // The resend ceiling is for resends only: the tightest the server accepts (one address must get
      // fewer than a code's ceiling) changes nothing here.
      await serve({ RATE_LIMIT_DEVICE_CODE_MAIL: "2/1h", RATE_LIMIT_DEVICE_CODE_RESEND_ADDRESS: "1/1h" });
      await createAccount(gate, "quota@example.com", PASSWORD);
      await strangerFails("quota@example.com");
      const answers = [];
      for (let i = 0; i < 3; i++) {
        const res = await tokenSignIn("quota@example.com", PASSWORD);
        answers.push([res.status, comparableAnswer(await res.json())]);
      }
      expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
      expect(await codeMails("quota@example.com")).toHaveLength(1);
    });

    it("`always` asks every new device, even with no failure; `off` asks none", async () => {
      await serve({ NEW_DEVICE_CONFIRMATION: "always" });
      await createAccount(gate, "always@example.com", PASSWORD);
      const asked = await browserSignIn("always@example.com", PASSWORD);
      expect(await asked.json()).toMatchObject({ error: "device_confirmation_required" });
      const ghost = await browserSignIn("no-account-here@example.com", PASSWORD);
      expect(comparableAnswer(await ghost.json())).toMatchObject({ error: "device_confirmation_required" });
      const code = await mailedCode("always@example.com");
      expect((await browserStep(pendingOf(asked), { code })).status).toBe(200);

      await serve({ NEW_DEVICE_CONFIRMATION: "off" });
      await createAccount(gate, "off@example.com", PASSWORD);
      await strangerFails("off@example.com");
      expect((await browserSignIn("off@example.com", PASSWORD)).status).toBe(200);
      await serve();
    });
  });
}

onEachDatabase("device confirmation", ({ label, makeDatabase }) => deviceConfirmationSuite(label, makeDatabase));

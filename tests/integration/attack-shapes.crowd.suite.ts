import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { NextRequest } from "next/server";
import type { ParsedMail } from "mailparser";
import { solve } from "../helpers/altcha";
import {
  browserSignIn as signInWith,
  comparableAnswer as comparable,
  createAccount,
  deviceCookieOf,
  sessionPairOf,
  tokenSignIn,
  type BrowserSignIn,
} from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse, testGatehouse } from "../helpers/instance";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";
import { linkTokenOf, recipientOf, startMailbox } from "../helpers/smtp";
import { watchPasswordChecks } from "../helpers/verifications";
import { deviceCodeMails, otherCode, pendingCookieOf, secondStepPost } from "../helpers/pending";
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
        // Small, so a test can spend it: the answers mailbox first an address gets.
        RATE_LIMIT_MAILBOX_FIRST: "25/15m",
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
    /** A POST with no body (from the page's origin unless `site` says otherwise): it reaches no account. */
    async function bodyless(address: string, cookie?: string, site = "same-origin"): Promise<Response> {
      const route = await import("@/app/api/auth/callback/credentials/route");
      return route.POST(
        new NextRequest("http://localhost/api/auth/callback/credentials", {
          method: "POST",
          headers: { [PEER_HEADER]: address, "sec-fetch-site": site, ...(cookie ? { cookie } : {}) },
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

    const { codeMails, mailedCode } = deviceCodeMails(
      () => gate,
      () => smtp.received,
    );

    /** The body of a sign-in's answer. */
    const bodyOf = async (res: Response) => (await res.clone().json()) as Record<string, unknown>;

    /** An answer mailbox first: a pending sign-in, no password checked yet. */
    async function expectMailboxFirst(res: Response) {
      expect(res.status).toBe(401);
      expect(await bodyOf(res)).toMatchObject({ error: "device_confirmation_required", mailboxFirst: true, methods: ["email_code"] });
      expect(pendingCookieOf(res)).not.toBeNull();
    }

    /**
     * A newcomer at an address answered mailbox first: the mailed code, then the same password
     * again from the browser the code made a known device. The session answer, and the device cookie.
     */
    async function inByMailbox(email: string, address: string): Promise<{ res: Response; cookie: string }> {
      const first = await browserSignIn(email, PASSWORD, { address });
      await expectMailboxFirst(first);
      const proved = await secondStepPost(pendingCookieOf(first), { code: await mailedCode(email) }, undefined, { [PEER_HEADER]: address });
      expect(proved.status).toBe(200);
      expect(await bodyOf(proved)).toMatchObject({ status: "mailbox_proved" });
      const res = await browserSignIn(email, PASSWORD, { address, cookie: `${DEVICE}=${deviceCookieOf(proved)!}` });
      // The sign-in replaced the device the code made: its cookie is the one that counts now.
      return { res, cookie: `${DEVICE}=${deviceCookieOf(res)}` };
    }

    /**
     * An owner's sign-in at an office whose checks for new devices a guest spent (5 wrong
     * passwords): answered mailbox first, with the code mailed to the owner.
     */
    async function pendingMailboxFirst(password = PASSWORD) {
      const office = freshAddress();
      const [owner, ...guessed] = await staff(6);
      for (const email of guessed) await browserSignIn(email, "a guess", { address: office });
      const first = await browserSignIn(owner!, password, { address: office });
      await expectMailboxFirst(first);
      const code = await mailedCode(owner!);
      const answer = (body: unknown, path?: string) => secondStepPost(pendingCookieOf(first), body, path, { [PEER_HEADER]: office });
      return { office, owner: owner!, code, answer };
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

      it("still stops spraying: past 5 wrong passwords from one address, new browsers prove the mailbox before any check", async () => {
        const sprayer = freshAddress();
        const targets = await staff(32);
        const answers = [];
        for (const email of targets) answers.push(await browserSignIn(email, "Summer2026!", { address: sprayer }));
        for (const res of answers.slice(0, 5)) expect(await bodyOf(res)).toMatchObject({ error: "invalid_credentials" });
        for (const res of answers.slice(5, 30)) await expectMailboxFirst(res);
        // The address's mailbox-first answers (25 here) spent: refused, and no check either.
        expect(answers.slice(30).map((res) => res.status)).toEqual([429, 429]);
        expect(checks.verified()).toBe(5);
      });

      it("mails a code mailbox first only to an account that exists, answering an address with none alike", async () => {
        const guest = freshAddress();
        const [owner, ...guessed] = await staff(6);
        for (const email of guessed) await browserSignIn(email, "a guess", { address: guest });
        checks.reset();
        const real = await browserSignIn(owner!, "a guess", { address: guest });
        const none = await browserSignIn("nobody-here@example.com", "a guess", { address: guest });
        await expectMailboxFirst(real);
        await expectMailboxFirst(none);
        expect(comparable(await bodyOf(real))).toEqual(comparable(await bodyOf(none)));
        expect(checks.verified()).toBe(0);
        expect(await codeMails(owner!)).toHaveLength(1);
        expect(smtp.received.filter((mail) => recipientOf(mail) === "nobody-here@example.com")).toHaveLength(0);
      });

      it("lets a newcomer in by the mailed code after a guest sprayed the office, and checks the password after it", async () => {
        const office = freshAddress();
        const [newcomer, ...guessed] = await staff(8);
        for (const email of guessed) await browserSignIn(email, "Summer2026!", { address: office });
        checks.reset();
        const { res, cookie } = await inByMailbox(newcomer!, office);
        expect(res.status).toBe(200);
        expect(sessionPairOf(res)).not.toBeNull();
        // One check: the password after the code, in the owner's lane (never before it).
        expect(checks.verified()).toBe(1);
        // The code made a known device: a wrong password from it is a plain 401, counted on its own lock.
        const wrong = await browserSignIn(newcomer!, "not it", { address: office, cookie });
        expect(wrong.status, JSON.stringify(await bodyOf(wrong))).toBe(401);
        expect(await bodyOf(wrong)).toMatchObject({ error: "invalid_credentials" });
      });

      it("mails one code per window, so a guest's tries at a staffer's username neither confuse nor spend the staffer's codes", async () => {
        const guest = freshAddress();
        const [owner, ...guessed] = await staff(6);
        for (const email of guessed) await browserSignIn(email, "a guess", { address: guest });
        const resend = (res: Response) =>
          secondStepPost(pendingCookieOf(res), {}, "/api/auth/second-step/resend", { [PEER_HEADER]: guest });
        // The guest asks for the staffer three times and resends each twice (a pending sign-in's
        // bound): past the guest address's resends (2 an hour).
        for (let i = 0; i < 3; i++) {
          const res = await browserSignIn(owner!, "a guess", { address: guest });
          await expectMailboxFirst(res);
          for (let j = 0; j < 2; j++) expect((await resend(res)).status).toBe(202);
        }
        const codesOf = async () => (await codeMails(owner!)).map((mail) => /enter this code: (\d{6})/.exec(mail.text ?? "")?.[1]);
        // The window's mail and the address's two resends, every one the same code.
        expect(await codesOf()).toHaveLength(3);
        expect(new Set(await codesOf()).size).toBe(1);
        // The staffer, at the same address: no new mail, and the code in the mailbox is theirs.
        const { res } = await inByMailbox(owner!, guest);
        expect(res.status).toBe(200);
        expect(await codesOf()).toHaveLength(3);

        // The next window, the address's resends still spent by the guest: a new pending sign-in is mailed
        // the new window's code, and that code finishes it.
        const realClock = gate.clock;
        (gate as { clock: () => number }).clock = () => realClock() + 10 * 60_000;
        try {
          const next = await browserSignIn(owner!, PASSWORD, { address: guest });
          await expectMailboxFirst(next);
          const codes = await codesOf();
          expect(codes).toHaveLength(4);
          expect(codes.at(-1)).not.toBe(codes[0]);
          const proved = await secondStepPost(pendingCookieOf(next), { code: codes.at(-1) }, undefined, { [PEER_HEADER]: guest });
          expect(await bodyOf(proved)).toMatchObject({ status: "mailbox_proved" });
        } finally {
          (gate as { clock: () => number }).clock = realClock;
        }
      });

      describe("Resend code, charged to the asking address (an attacker's review of record 40)", () => {
        const resendFrom = (res: Response, address: string) =>
          secondStepPost(pendingCookieOf(res), {}, "/api/auth/second-step/resend", { [PEER_HEADER]: address });

        /** An address whose checks for new devices a guest spent: a new browser there is answered mailbox first. */
        async function sprayed(): Promise<string> {
          const address = freshAddress();
          for (const email of await staff(5)) await browserSignIn(email, "a guess", { address });
          return address;
        }

        /**
         * Runs `steps` on the gate's clock moved to just past the start of a code window (and
         * `windows` windows later with `later`), so every sign-in of a step shares that window.
         */
        async function inWindows(steps: (later: (windows: number) => void) => Promise<void>) {
          const realClock = gate.clock;
          const windowMs = 10 * 60_000;
          const start = (Math.floor(realClock() / windowMs) + 1) * windowMs + 1_000;
          let shift = start - realClock();
          (gate as { clock: () => number }).clock = () => realClock() + shift;
          try {
            await steps((windows) => {
              shift += windows * windowMs;
            });
          } finally {
            (gate as { clock: () => number }).clock = realClock;
          }
        }

        it("a guest's resends from their own pending sign-ins leave the owner's own resend, elsewhere, its mail", async () => {
          const guest = await sprayed();
          const office = await sprayed();
          const [owner] = await staff(1);
          await inWindows(async () => {
            // Knowing only the address: three pending sign-ins, each from its own request, each resent twice.
            for (let i = 0; i < 3; i++) {
              const res = await browserSignIn(owner!, "a guess", { address: guest });
              await expectMailboxFirst(res);
              for (let j = 0; j < 2; j++) expect((await resendFrom(res, guest)).status).toBe(202);
            }
            const byGuest = (await codeMails(owner!)).length;

            // The owner at their own office, a new browser in the same window: no mail of its own (the
            // window's went), and "Resend code" mails it, describing the owner's own sign-in.
            const mine = await browserSignIn(owner!, PASSWORD, { address: office });
            await expectMailboxFirst(mine);
            expect(await codeMails(owner!)).toHaveLength(byGuest);
            expect((await resendFrom(mine, office)).status).toBe(202);
            expect(await codeMails(owner!)).toHaveLength(byGuest + 1);
            const proved = await secondStepPost(pendingCookieOf(mine), { code: await mailedCode(owner!) }, undefined, {
              [PEER_HEADER]: office,
            });
            expect(await bodyOf(proved)).toMatchObject({ status: "mailbox_proved" });
            // The window's mail and the guest address's own two resends: the code's third was not the guest's to spend.
            expect(byGuest).toBe(1 + 2);
          });
        });

        it("lets a crowd of addresses spend only one code's resends, which the mailbox then holds; the next code is resent", async () => {
          const guest = await sprayed();
          const office = await sprayed();
          const [owner] = await staff(1);
          await inWindows(async (later) => {
            // The guest's pending sign-ins' cookies, resent from a new address each time: no address's budget
            // holds them, only the account's ceiling.
            for (let i = 0; i < 4; i++) {
              const res = await browserSignIn(owner!, "a guess", { address: guest });
              await expectMailboxFirst(res);
              for (let j = 0; j < 2; j++) expect((await resendFrom(res, freshAddress())).status).toBe(202);
            }
            const codesOf = async () => (await codeMails(owner!)).map((mail) => /enter this code: (\d{6})/.exec(mail.text ?? "")?.[1]);
            const crowd = await codesOf();
            // The window's mail and the code's three resends (deviceCodeMail), every one the same code: the
            // one the owner's sign-in of this window waits for.
            expect(crowd).toHaveLength(1 + 3);
            expect(new Set(crowd).size).toBe(1);
            // The owner asks twice in this window: refused by the code's ceiling, and given back to the
            // office's budget (2 an hour), which a refused mail does not spend.
            const mine = await browserSignIn(owner!, PASSWORD, { address: office });
            await expectMailboxFirst(mine);
            for (let j = 0; j < 2; j++) expect((await resendFrom(mine, office)).status).toBe(202);
            expect(await codesOf()).toHaveLength(1 + 3);

            // The next window: the owner's new sign-in is mailed its fresh code, and its resend goes too.
            later(1);
            const next = await browserSignIn(owner!, PASSWORD, { address: office });
            await expectMailboxFirst(next);
            const fresh = await codesOf();
            expect(fresh.at(-1)).not.toBe(crowd[0]);
            expect((await resendFrom(next, office)).status).toBe(202);
            const resent = await codesOf();
            expect(resent).toHaveLength(fresh.length + 1);
            expect(resent.at(-1)).toBe(fresh.at(-1));
          });
        });
      });

      it("lets more newcomers prove the mailbox from one address than its second-step budget holds (30)", async () => {
        const office = freshAddress();
        const people = await staff(36);
        for (const email of people.slice(0, 5)) await browserSignIn(email, "Summer2026!", { address: office });
        const statuses = [];
        for (const email of people.slice(5)) statuses.push((await inByMailbox(email, office)).res.status);
        expect(statuses.filter((status) => status === 200)).toHaveLength(31);
      });

      it("does not let the token API be the way around the address's 5 checks for new devices", async () => {
        const guest = freshAddress();
        const targets = await staff(8);
        // Three wrong passwords by the browser, then the API: the same budget.
        for (const email of targets.slice(0, 3)) await browserSignIn(email, "Summer2026!", { address: guest });
        const api = [];
        for (const email of targets.slice(3)) {
          // A challenge from the guest's address, sized for its failures, as an API client would fetch it.
          const altcha = await solve(await (await challenge(guest)).json());
          api.push((await tokenSignIn(email, "Summer2026!", { address: guest, altcha })).status);
        }
        expect(api).toEqual([401, 401, 429, 429, 429]);
        expect(checks.verified()).toBe(5);
        // And the browser after the API's two: mailbox first.
        await expectMailboxFirst(await browserSignIn(targets[0]!, "Summer2026!", { address: guest }));
        expect(checks.verified()).toBe(5);
      });

      it("gives the code nothing past the password: the right code and a wrong password sign nobody in", async () => {
        const { office, owner, code, answer } = await pendingMailboxFirst("a wrong password");
        const proved = await answer({ code });
        expect(proved.status).toBe(200);
        expect(sessionPairOf(proved)).toBeNull();
        const cookie = `${DEVICE}=${deviceCookieOf(proved)!}`;
        const again = await browserSignIn(owner, "a wrong password", { address: office, cookie });
        expect(again.status).toBe(401);
        expect(sessionPairOf(again)).toBeNull();
      });

      it("counts a wrong code mailbox first, and spends the pending sign-in once against racing and replayed codes", async () => {
        const { code, answer } = await pendingMailboxFirst();
        expect((await answer({ code: otherCode(code) })).status).toBe(401);
        // Two answers racing with the right code: one proves the mailbox, the other finds it spent.
        const raced = await Promise.all([0, 1].map(() => answer({ code })));
        expect(raced.map((res) => res.status).sort()).toEqual([200, 401]);
        // A replay of the code after it worked finds nothing.
        expect(await bodyOf(await answer({ code }))).toMatchObject({ error: "second_step_invalid" });
      });

      it("does not let a pending sign-in mailbox first be finished into a session, whatever the route", async () => {
        const { code, answer } = await pendingMailboxFirst();
        // The second step's passkey routes know no such pending sign-in.
        const viaPasskey = await answer({}, "/api/auth/second-step/passkey/options");
        expect(viaPasskey.status).toBe(401);
        expect(sessionPairOf(viaPasskey)).toBeNull();
        const proved = await answer({ code });
        expect(proved.status).toBe(200);
        expect(sessionPairOf(proved)).toBeNull();
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

      it("counts malformed and body-less requests as the address's failures, with or without a device cookie; another site's, none", async () => {
        const office = freshAddress();
        const [owner] = await staff(1);
        const cookie = await knownDevice(owner!, office);
        // A body-less POST with the cookie reaches no account: it pays the address on its way out.
        for (let i = 0; i < 10; i++) expect((await bodyless(office, cookie)).status).toBe(415);
        // One the CSRF rule refuses pays none of the address's rows: it is refused before them.
        for (let i = 0; i < 10; i++) expect((await bodyless(office, cookie, "cross-site")).status).toBe(403);
        for (let i = 0; i < 20; i++) expect((await bodyless(office)).status).toBe(415);
        const refused = await bodyless(office);
        expect(refused.status).toBe(429);
        expect(refused.headers.get("Retry-After")).not.toBeNull();
      });

      it("spends none of the office's budgets for another site's posts from its browsers, with a live session or none", async () => {
        const office = freshAddress();
        const [owner, insider, ...targets] = await staff(8);
        // A staffer's live session, as the attacker's page finds it in that browser.
        const session = sessionPairOf(await browserSignIn(insider!, PASSWORD, { address: freshAddress() }))!;
        expect(session).not.toBeNull();
        checks.reset();
        const foreign = { "sec-fetch-site": "cross-site", origin: "https://evil.example" };
        for (const [i, email] of targets.entries()) {
          const cookie = i % 2 === 0 ? session : undefined;
          expect((await signInWith(email, "Summer2026!", { address: office, cookie, headers: foreign })).status).toBe(403);
          expect((await tokenSignIn(email, "Summer2026!", { address: office, headers: { ...foreign, cookie: session } })).status).toBe(403);
        }
        expect(checks.verified()).toBe(0);
        // The office's own pages, after: its newcomer gets in with no mailed code...
        expect((await browserSignIn(owner!, PASSWORD, { address: office })).status).toBe(200);
        // ...and its 5 checks for new devices are all still there (before the fix the 12 posts had spent them).
        const answers = [];
        for (const email of targets.slice(0, 6)) answers.push(await browserSignIn(email, "Summer2026!", { address: office }));
        for (const res of answers.slice(0, 5)) expect(await bodyOf(res)).toMatchObject({ error: "invalid_credentials" });
        await expectMailboxFirst(answers[5]!);
      });

      it("bounds a flood of another site's posts from one address in a bucket of their own, answered early for such posts only", async () => {
        const flooder = freshAddress();
        const [owner] = await staff(1);
        // crossSiteRefusals' default, 20 a minute.
        const capacity = 20;
        const statuses = [];
        for (let i = 0; i < capacity + 3; i++) statuses.push((await bodyless(flooder, undefined, "cross-site")).status);
        expect(statuses.slice(0, capacity).every((status) => status === 403)).toBe(true);
        expect(statuses.slice(capacity)).toEqual([429, 429, 429]);
        // The fast path answers the next cross-site post from that address before Next.js...
        const early = (site: string) =>
          gate.fastPath.answer("POST", "/api/auth/callback/credentials", new Headers({ [PEER_HEADER]: flooder, "sec-fetch-site": site }));
        expect((await early("cross-site"))?.status).toBe(429);
        // ...and never one from the app's own pages: the flood cost the address's own sign-ins nothing.
        expect(await early("same-origin")).toBeNull();
        expect((await browserSignIn(owner!, PASSWORD, { address: flooder })).status).toBe(200);
      });

      it("does not let one account's device cookie pass the address's limit for another account", async () => {
        const office = freshAddress();
        const [attacker, ...victims] = await staff(7);
        const cookie = await knownDevice(attacker!, freshAddress());
        checks.reset();
        const answers = [];
        for (const email of victims.slice(0, 5)) answers.push(await browserSignIn(email, "a guess", { address: office, cookie }));
        // The cookie's 5 were the address's (refused as a stranger's: wrong password, or the proof of
        // work sized for a known device and spent by none of this account's): the next one is
        // answered mailbox first, with or without the cookie.
        for (const res of answers) expect([400, 401]).toContain(res.status);
        await expectMailboxFirst(await browserSignIn(victims[5]!, "a guess", { address: office }));
        expect(checks.verified()).toBeLessThanOrEqual(5);
      });

      it("charges a revoked device's sign-in to the address", async () => {
        const office = freshAddress();
        const [owner, ...guessed] = await staff(31);
        const cookie = await knownDevice(owner!, office);
        await gate.devices.forgetAll(gate.usernameKey(owner!));
        for (const email of guessed.slice(0, 4)) await browserSignIn(email, "a guess", { address: office });
        // The 5th of the address's checks for new devices goes to the revoked device's failed try;
        // the next new browser proves the mailbox first.
        expect((await browserSignIn(owner!, "a guess", { address: office, cookie })).status).toBe(401);
        await expectMailboxFirst(await browserSignIn(guessed[4]!, PASSWORD, { address: office }));
      });

      it("gives a guest guessing one account 5 checks, and lets the office's newcomers in by the mailed code", async () => {
        const office = freshAddress();
        const [victim, ...newcomers] = await staff(11);
        for (let i = 0; i < 60; i++) await browserSignIn(victim!, `guess ${i}`, { address: office });
        expect(checks.verified()).toBeLessThanOrEqual(5);
        const statuses = [];
        for (const email of newcomers) statuses.push((await inByMailbox(email, office)).res.status);
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
        const locked = await gate.lockouts.check(gate.usernameKey(victim!), Date.now(), gate.config.lockout);
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

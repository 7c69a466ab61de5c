import type { ParsedMail } from "mailparser";
import { NextRequest } from "next/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { browserSignIn, comparableAnswer, createAccount, deviceCookieOf, sessionPairOf, tokenSignIn } from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { freshAddress, PEER_HEADER } from "../helpers/peer";
import { deviceCodeMails, otherCode, pendingCookieOf, secondStepPost } from "../helpers/pending";
import { redisUrl, testKeyPrefix } from "../helpers/redis";
import { linkTokenOf, recipientOf, startMailbox } from "../helpers/smtp";
import { APP_GATEHOUSE, serve } from "@/lib/app";
import { forget, remember } from "@/lib/remember";
import { DEVICE_CODE_WINDOW_MS, deviceCodeWindow } from "@/lib/factors/device-confirmation";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the owner's own passphrase";
const WRONG = "a stuffed password from elsewhere";
const CODE_MAIL = /sign in to .* on a new device/i;
const UNLOCK_MAIL = /paused/i;

/**
 * A stranger spending the owner's code tries (issue 55, item 4), as the attacker ran it: with no
 * password at all, wrong passwords (each answered with a stand-in pending sign-in) and wrong codes
 * on them. Wrong codes count where wrong passwords count, on the username's lock for strangers,
 * which mails the owner the unlock link; the owner's own pending sign-in is never refused for
 * them; "Resend code" answers a stand-in as it answers a real one.
 */
export function codeShapes(current: () => { gate: Gate }, makeDatabase: () => Promise<TestDatabase>) {
  // With each limiter store the mail quota and the route limits may live in (Redis where the machine has it).
  const stores: [name: string, settings: Record<string, string>][] = [["memory", {}]];
  const redis = redisUrl();
  if (redis) stores.push(["Redis", { RATE_LIMIT_STORE: "redis", REDIS_URL: redis, RATE_LIMIT_KEY_PREFIX: testKeyPrefix() }]);
  describe.each(stores)("nobody spends the owner's code tries (issue 55, item 4), limiter store: %s", (_store, storeSettings) => {
    let database: TestDatabase;
    let gate: Gate;
    let smtp: Awaited<ReturnType<typeof startMailbox>>;

    const serveWith = async (settings: Record<string, string> = {}) => {
      await closeServed(gate);
      gate = await servedGatehouse(database.url, { ...smtp.settings, ...storeSettings, HASH_QUEUE: "100", ...settings });
    };

    beforeAll(async () => {
      database = await makeDatabase();
      smtp = await startMailbox();
      await serveWith();
    });

    afterAll(async () => {
      await closeServed(gate);
      await smtp?.close();
      await database?.dispose();
      // The suite's own instance serves the routes again.
      forget(APP_GATEHOUSE);
      await remember(APP_GATEHOUSE, async () => serve(current().gate));
    });

    async function mailsTo(email: string, subject: RegExp): Promise<ParsedMail[]> {
      await gate.background.idle();
      await gate.mailer.idle();
      return smtp.received.filter((mail) => recipientOf(mail) === email && subject.test(mail.subject ?? ""));
    }
    const { mailedCode: newestCode } = deviceCodeMails(
      () => gate,
      () => smtp.received,
    );
    const pendingOf = pendingCookieOf;
    const browserPost = (path: string, pendingCookie: string | null, body: unknown, headers: Record<string, string> = {}) =>
      secondStepPost(pendingCookie, body, path, headers);
    const browserStep = (pendingCookie: string | null, code: string) => secondStepPost(pendingCookie, { code });
    const resend = (pendingCookie: string | null, headers: Record<string, string> = {}) =>
      secondStepPost(pendingCookie, {}, "/api/auth/second-step/resend", headers);
    const confirmDevice = (confirmationToken: string, code: string, address = freshAddress()) =>
      import("@/app/api/v1/authentication/token/confirm-device/route").then(({ POST }) =>
        POST(
          new NextRequest("http://localhost/api/v1/authentication/token/confirm-device", {
            method: "POST",
            headers: { "content-type": "application/json", [PEER_HEADER]: address },
            body: JSON.stringify({ confirmation_token: confirmationToken, code }),
          }),
        ),
      );
    const confirmationTokenOf = async (res: Response) => ((await res.json()) as { confirmation_token: string }).confirmation_token;

    /** A new account under attack, and its owner's right password on a new browser: that pending sign-in and its mailed code. */
    async function ownerWaitingForCode(email: string) {
      await createAccount(gate, email, PASSWORD);
      expect((await tokenSignIn(email, WRONG)).status).toBe(401);
      const owner = await browserSignIn(email, PASSWORD);
      expect(await owner.json()).toMatchObject({ error: "device_confirmation_required" });
      return { pending: pendingOf(owner), code: await newestCode(email) };
    }

    const strangers = async (email: string) => (await gate.lockouts.check(gate.usernameKey(email), Date.now(), gate.config.lockout)).locked;
    const failuresOf = async (email: string) =>
      (await gate.prisma.signInLockout.findUnique({ where: { usernameKey: gate.usernameKey(email) } }))?.failureCount ?? 0;

    it("a stranger with no password: wrong codes on stand-ins lock the username for strangers and mail the unlock link", async () => {
      const email = "spent@example.com";
      await createAccount(gate, email, PASSWORD);
      // The owner's browser from before the attack: a known device.
      const known = deviceCookieOf(await browserSignIn(email, PASSWORD));
      expect(known).not.toBeNull();

      // The attack the issue describes: three wrong passwords (the second and third answered with
      // a stand-in pending sign-in, the first making the username "under attack"), then six wrong codes.
      const standIns = [];
      for (let i = 0; i < 3; i++) {
        const res = await tokenSignIn(email, `${WRONG} ${i}`);
        expect(res.status).toBe(401);
        const body = (await res.json()) as { error: string; confirmation_token?: string };
        if (body.confirmation_token) standIns.push(body.confirmation_token);
      }
      expect(standIns).toHaveLength(2);
      expect(await mailsTo(email, UNLOCK_MAIL)).toHaveLength(0);
      const codeAnswers = [];
      for (let i = 0; i < 6; i++) codeAnswers.push((await confirmDevice(standIns[i % 2]!, "000000")).status);
      // Each was a wrong code, answered as one: the stand-ins' own tries, no lock in between.
      expect(codeAnswers).toEqual([401, 401, 401, 401, 401, 401]);

      // Counted where the wrong passwords are: the strangers' lock, with its mail, as five wrong
      // passwords would (each stand-in's first wrong code counts; record 20's amendment).
      expect(await failuresOf(email)).toBe(5);
      expect(await strangers(email)).toBe(true);
      expect(await mailsTo(email, UNLOCK_MAIL)).toHaveLength(1);
      const refused = await tokenSignIn(email, `${WRONG} again`);
      expect(refused.status).toBe(429);
      expect(await refused.json()).toMatchObject({ error: "locked" });

      // The owner's lane is spared: the known device signs in at once.
      const byKnownDevice = await browserSignIn(email, PASSWORD, { cookie: `gatehouse-device=${known}` });
      expect(byKnownDevice.status, await byKnownDevice.clone().text()).toBe(200);
      // And the mailed link lets a new browser past the lock.
      const token = linkTokenOf((await mailsTo(email, UNLOCK_MAIL))[0]!);
      expect(token).not.toBeNull();
      const unlocked = await browserPost("/api/unlock", null, { token });
      expect(unlocked.status, await unlocked.clone().text()).toBe(200);
      const fresh = await browserSignIn(email, PASSWORD, { cookie: `gatehouse-device=${deviceCookieOf(unlocked)}` });
      expect(fresh.status, await fresh.clone().text()).toBe(200);
      expect(sessionPairOf(fresh)).not.toBeNull();
    });

    it("the owner's pending sign-in from a new device is not refused because strangers guessed codes", async () => {
      const email = "pending-owner@example.com";
      const owner = await ownerWaitingForCode(email);

      // Meanwhile strangers guess codes on stand-ins of their own, well past every threshold.
      for (let round = 0; round < 2; round++) {
        const token = await confirmationTokenOf(await tokenSignIn(email, `${WRONG} ${round}`));
        for (let i = 0; i < 5; i++) expect((await confirmDevice(token, "000000")).status).toBe(401);
        if (await strangers(email)) break;
      }
      expect(await strangers(email)).toBe(true);

      // The owner's own code on the owner's own pending sign-in: in.
      const done = await browserStep(owner.pending, owner.code);
      expect(done.status, await done.clone().text()).toBe(200);
      expect(sessionPairOf(done)).not.toBeNull();
      expect(deviceCookieOf(done)).not.toBeNull();
    });

    it("the owner's typo on the code costs the owner nothing but that try", async () => {
      const email = "typo-code@example.com";
      const { pending, code } = await ownerWaitingForCode(email);
      const typo = await browserStep(pending, otherCode(code));
      expect(typo.status).toBe(401);
      expect(await typo.json()).toMatchObject({ error: "invalid_code", triesLeft: 4 });
      expect((await browserStep(pending, code)).status).toBe(200);
      // The owner's success ends the streak: the next stranger starts from nothing.
      expect(await failuresOf(email)).toBe(0);
    });

    it("wrong codes on a stand-in and on a right password's pending sign-in answer and count alike", async () => {
      const real = "counted-real@example.com";
      const wrong = "counted-wrong@example.com";
      await createAccount(gate, real, PASSWORD);
      await createAccount(gate, wrong, PASSWORD);
      for (const email of [real, wrong, "counted-nobody@example.com"]) expect((await tokenSignIn(email, WRONG)).status).toBe(401);
      const tokens = {
        real: await confirmationTokenOf(await tokenSignIn(real, PASSWORD)),
        wrong: await confirmationTokenOf(await tokenSignIn(wrong, WRONG)),
        nobody: await confirmationTokenOf(await tokenSignIn("counted-nobody@example.com", PASSWORD)),
      };
      const code = await newestCode(real);
      for (let n = 1; n <= 5; n++) {
        const answers = [];
        for (const token of Object.values(tokens)) {
          const res = await confirmDevice(token, otherCode(code));
          answers.push([res.status, comparableAnswer((await res.json()) as Record<string, unknown>)]);
        }
        expect(new Set(answers.map((answer) => JSON.stringify(answer))).size, JSON.stringify(answers)).toBe(1);
        expect(answers[0]).toEqual([401, expect.objectContaining({ error: "invalid_code", triesLeft: 5 - n })]);
      }
      // Each username alike: a failure, a counted password, and the pending sign-in's first wrong
      // code (its next four spend only its own tries: codes need no proof of work).
      expect([await failuresOf(real), await failuresOf(wrong), await failuresOf("counted-nobody@example.com")]).toEqual([3, 3, 3]);
    });

    describe("one code finishes one sign-in (an attacker's review of record 40)", () => {
      /** The username "at risk" (a wrong password), so a right password from a new device waits for a code. */
      async function atRisk(email: string) {
        await createAccount(gate, email, PASSWORD);
        expect((await tokenSignIn(email, WRONG)).status).toBe(401);
      }

      /** `code` finishes nothing on `token`: it was spent, or retired. */
      async function spent(token: string, code: string) {
        const res = await confirmDevice(token, code);
        expect(res.status).toBe(401);
        expect(await res.json()).toMatchObject({ error: "second_step_invalid", reason: "used" });
      }

      /** The next sign-in from a new device is mailed a fresh code at once (the second mail), and it finishes it. */
      async function freshCodeFinishes(email: string, old: string) {
        const next = await confirmationTokenOf(await tokenSignIn(email, PASSWORD));
        expect(await mailsTo(email, CODE_MAIL)).toHaveLength(2);
        const fresh = await newestCode(email);
        expect(fresh).not.toBe(old);
        expect((await confirmDevice(next, fresh)).status).toBe(200);
      }

      it("a code the owner used finishes no other pending sign-in, and the next sign-in is mailed a fresh code", async () => {
        const email = "leaked-code@example.com";
        await atRisk(email);
        // A stranger who has the password waits too, in the owner's window: one mail, one code for both.
        const stranger = await confirmationTokenOf(await tokenSignIn(email, PASSWORD));
        const owner = pendingOf(await browserSignIn(email, PASSWORD));
        expect(await mailsTo(email, CODE_MAIL)).toHaveLength(1);
        const code = await newestCode(email);
        expect((await browserStep(owner, code)).status).toBe(200);

        // The mail forwarded, or relayed by a phishing page: it finishes nothing more.
        await spent(stranger, code);
        // The next sign-in from a new device waits for a code of its own, mailed at once.
        await freshCodeFinishes(email, code);
      });

      it("wrong codes from one address stop being compared at the cap, answered as a stand-in's are; the owner's code still works", async () => {
        // A cap of 3 (10 by default), so the route's own per-address limits stay out of the way.
        await serveWith({ RATE_LIMIT_SIGN_IN_USERNAME: "20/15m", LOCKOUT_THRESHOLD: "10", RATE_LIMIT_DEVICE_CODE_GUESSES: "3/10m" });
        try {
          const email = "guessed-code@example.com";
          const nobody = "guessed-nobody@example.com";
          await atRisk(email);
          expect((await tokenSignIn(nobody, WRONG)).status).toBe(401);
          const [guesser, standInGuesser] = ["198.51.100.77", "198.51.100.79"];
          const tokens = [];
          for (let i = 0; i < 2; i++) tokens.push(await confirmationTokenOf(await tokenSignIn(email, PASSWORD, { address: guesser })));
          const standIn = await confirmationTokenOf(await tokenSignIn(nobody, PASSWORD, { address: standInGuesser }));
          const owner = await confirmationTokenOf(await tokenSignIn(email, PASSWORD));
          const code = await newestCode(email);
          const wrongCodes = Array.from({ length: 3 }, (_, i) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, "0"));

          // Three wrong codes from the guesser's address, then the right one: not even compared.
          const answers: unknown[][] = [];
          for (const wrong of wrongCodes) {
            const res = await confirmDevice(tokens[0]!, wrong, guesser);
            answers.push([res.status, comparableAnswer((await res.json()) as Record<string, unknown>)]);
          }
          const blocked = await confirmDevice(tokens[1]!, code, guesser);
          expect(blocked.status).toBe(401);
          expect(await blocked.json()).toMatchObject({ error: "invalid_code" });
          // A stand-in's wrong codes are answered alike.
          const standInAnswers: unknown[][] = [];
          for (const wrong of wrongCodes) {
            const res = await confirmDevice(standIn, wrong, standInGuesser);
            standInAnswers.push([res.status, comparableAnswer((await res.json()) as Record<string, unknown>)]);
          }
          expect(standInAnswers).toEqual(answers);
          // The owner, elsewhere, types the code the mail gave them: it works.
          expect((await confirmDevice(owner, code)).status).toBe(200);
        } finally {
          await serveWith();
        }
      });
    });

    describe("Resend code", () => {
      /** Status, body and the headers a client could tell apart (Date aside). */
      async function answerOf(res: Response) {
        const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== "date"));
        return { status: res.status, headers, body: await res.text() };
      }

      it("mails a right password's pending sign-in its code again; a stand-in's answers alike and mails nothing", async () => {
        const email = "resend@example.com";
        await createAccount(gate, email, PASSWORD);
        for (const address of [email, "resend-nobody@example.com"]) expect((await tokenSignIn(address, WRONG)).status).toBe(401);
        const real = pendingOf(await browserSignIn(email, PASSWORD));
        const standIn = pendingOf(await browserSignIn(email, WRONG));
        const nobody = pendingOf(await browserSignIn("resend-nobody@example.com", PASSWORD));
        const first = await newestCode(email);

        const answers = [await answerOf(await resend(real)), await answerOf(await resend(standIn)), await answerOf(await resend(nobody))];
        expect(answers[0]!.status).toBe(202);
        expect(answers[1]).toEqual(answers[0]);
        expect(answers[2]).toEqual(answers[0]);
        expect(await mailsTo(email, CODE_MAIL)).toHaveLength(2);
        expect(smtp.received.filter((mail) => recipientOf(mail) === "resend-nobody@example.com")).toHaveLength(0);
        const second = await newestCode(email);

        // The same code again (the window's); a resend spends no try.
        expect(second).toBe(first);
        const done = await browserStep(real, second);
        expect(done.status, await done.clone().text()).toBe(200);
        // Finished: nothing more to resend for.
        expect(await resend(real)).toMatchObject({ status: 401 });
      });

      it("is bounded per account and code by the code mail ceiling; past it the answer is the same and the last code still works", async () => {
        // Each resend comes from a fresh address, so the per-address allowance (below the ceiling, as
        // the server requires) never binds here.
        await serveWith({ RATE_LIMIT_DEVICE_CODE_MAIL: "2/1h", RATE_LIMIT_DEVICE_CODE_RESEND_ADDRESS: "1/1h" });
        try {
          const email = "resend-quota@example.com";
          const { pending } = await ownerWaitingForCode(email);
          const answers = [];
          for (let i = 0; i < 4; i++) answers.push(await answerOf(await resend(pending)));
          expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
          // The window's mail, then two resends.
          expect(await mailsTo(email, CODE_MAIL)).toHaveLength(3);
          expect((await browserStep(pending, await newestCode(email))).status).toBe(200);
        } finally {
          await serveWith();
        }
      });

      it("mails a code only while its window is current: a later resend is answered as expired and mails nothing", async () => {
        const email = "resend-late@example.com";
        const { pending } = await ownerWaitingForCode(email);
        const nextWindowMs = (deviceCodeWindow(Date.now()) + 1) * DEVICE_CODE_WINDOW_MS + 1;
        const late = vi.spyOn(gate, "clock").mockReturnValue(nextWindowMs);
        try {
          const res = await resend(pending);
          expect(res.status).toBe(401);
          expect(await res.json()).toMatchObject({ error: "second_step_invalid", reason: "expired" });
        } finally {
          late.mockRestore();
        }
        expect(await mailsTo(email, CODE_MAIL)).toHaveLength(1);
      });

      it("mails a pending sign-in's code at most twice more, whoever asks, and says until when it is valid", async () => {
        const email = "resend-bounded@example.com";
        const startedMs = Date.now();
        const { pending } = await ownerWaitingForCode(email);
        const answers = [];
        for (let i = 0; i < 5; i++) answers.push(await answerOf(await resend(pending)));
        expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
        // The window's mail, then two resends: the code's third is left to its owner's other sign-ins.
        const mails = await mailsTo(email, CODE_MAIL);
        expect(mails).toHaveLength(3);
        const until = /valid\s+until\s+(\d\d:\d\d)\s+\(UTC\)/.exec(mails[0]!.text ?? "")?.[1];
        const expected = [0, 1].map((late) => new Date(startedMs + 10 * 60_000 + late * 60_000).toISOString().slice(11, 16));
        expect(expected).toContain(until);
      });

      it("refuses another site, a missing or spent pending sign-in, and the second factor's step", async () => {
        expect((await resend(null)).status).toBe(401);
        expect((await resend("gatehouse-pending-sign-in=" + "A".repeat(43))).status).toBe(401);
        const email = "resend-shapes@example.com";
        const { pending } = await ownerWaitingForCode(email);
        expect((await resend(pending, { "sec-fetch-site": "cross-site" })).status).toBe(403);
        expect(await mailsTo(email, CODE_MAIL)).toHaveLength(1);
      });
    });
  });
}

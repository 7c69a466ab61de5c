import type { ParsedMail } from "mailparser";
import { NextRequest } from "next/server";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  altchaPayload,
  browserSignIn,
  createAccount,
  deviceCookieOf,
  refreshTokens,
  sessionPairOf,
  sessionWith,
  tokenSignIn,
  comparableAnswer,
} from "../helpers/browser";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, runAdminCommand, servedGatehouse } from "../helpers/instance";
import { announcePeerHeader, freshAddress, PEER_HEADER } from "../helpers/peer";
import { linkTokenOf, recipientOf, startMailbox } from "../helpers/smtp";
import { onEachDatabase } from "../helpers/each-database";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the right passphrase";
const NEW_PASSWORD = "a brand new passphrase";

/**
 * Recovery by email through the real route handlers, a real database and a real SMTP server
 * started here: registration that answers alike for new and taken addresses, verification,
 * password reset, the unlock link, the notices, and every bad link answered alike.
 */
export function recoverySuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`recovery by email on ${label}`, () => {
    let database: TestDatabase;
    let gate: Gate;
    let smtp: Awaited<ReturnType<typeof startMailbox>>;

    beforeAll(async () => {
      announcePeerHeader();
      database = await makeDatabase();
      smtp = await startMailbox();
      gate = await servedGatehouse(database.url, { ...smtp.settings, HASH_QUEUE: "100", LOCKOUT_THRESHOLD: "3" });
    });

    afterAll(async () => {
      await closeServed(gate);
      await smtp?.close();
      await database?.dispose();
    });

    /** Everything the requests so far started has been queued and delivered (or given up). */
    async function settled() {
      await gate.background.idle();
      await gate.mailer.idle();
    }

    function mailsTo(email: string, subject?: RegExp): ParsedMail[] {
      return smtp.received.filter((mail) => recipientOf(mail) === email && (!subject || subject.test(mail.subject ?? "")));
    }

    async function onlyMailTo(email: string, subject: RegExp): Promise<ParsedMail> {
      await settled();
      const mails = mailsTo(email, subject);
      expect(mails, `${subject} to ${email}`).toHaveLength(1);
      return mails[0]!;
    }

    function postJson(path: string, body: unknown, headers: Record<string, string> = {}) {
      return new NextRequest(`http://localhost${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", [PEER_HEADER]: freshAddress(), ...headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
    }

    const routes = {
      register: async (body: unknown) => (await import("@/app/api/register/route")).POST(postJson("/api/register", body)),
      forgot: async (body: unknown, headers?: Record<string, string>) =>
        (await import("@/app/api/password/forgot/route")).POST(postJson("/api/password/forgot", body, headers)),
      reset: async (body: unknown) => (await import("@/app/api/password/reset/route")).POST(postJson("/api/password/reset", body)),
      verify: async (body: unknown, headers: Record<string, string> = { "sec-fetch-site": "same-origin" }) =>
        (await import("@/app/api/email/verify/route")).POST(postJson("/api/email/verify", body, headers)),
      unlock: async (body: unknown) => (await import("@/app/api/unlock/route")).POST(postJson("/api/unlock", body)),
      previewReset: async (body: unknown) =>
        (await import("@/app/api/password/reset/preview/route")).POST(postJson("/api/password/reset/preview", body)),
      previewUnlock: async (body: unknown) => (await import("@/app/api/unlock/preview/route")).POST(postJson("/api/unlock/preview", body)),
      previewVerify: async (body: unknown) =>
        (await import("@/app/api/email/verify/preview/route")).POST(postJson("/api/email/verify/preview", body)),
      resendVerification: async (email: string) =>
        (await import("@/app/api/email/verification/route")).POST(
          postJson("/api/email/verification", { email, altcha: await altchaPayload() }),
        ),
      requestUnlock: async (email: string) =>
        (await import("@/app/api/unlock/request/route")).POST(postJson("/api/unlock/request", { email, altcha: await altchaPayload() })),
    };

    async function register(email: string, password = PASSWORD) {
      return routes.register({ email, password, altcha: await altchaPayload() });
    }

    async function forgot(email: string, headers?: Record<string, string>) {
      return routes.forgot({ email, altcha: await altchaPayload() }, headers);
    }

    /** Status, body and the headers a client could tell apart (Date aside). */
    async function answerOf(res: Response) {
      const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== "date"));
      return { status: res.status, headers, body: await res.text() };
    }

    describe("registration reveals nothing", () => {
      it("answers a new and a taken address byte for byte alike; the new one gets a verification link, the taken one's owner a notice", async () => {
        await createAccount(gate, "taken@example.com", PASSWORD);
        const fresh = await answerOf(await register("fresh@example.com"));
        const taken = await answerOf(await register("taken@example.com", "a different passphrase"));
        expect(fresh.status).toBe(202);
        expect(taken).toEqual(fresh);

        const verification = await onlyMailTo("fresh@example.com", /confirm your email/i);
        expect(linkTokenOf(verification)).not.toBeNull();
        expect(verification.text).toContain("http://localhost:3000/verify-email#token=");
        expect(verification.html).toContain("/verify-email#token=");
        const notice = await onlyMailTo("taken@example.com", /you already have an? .* account/i);
        expect(linkTokenOf(notice)).toBeNull();
        expect(notice.text).toMatch(/reset your password/i);
      });

      it("takes the same time class for a new and a taken address: the same Argon2id work, the email afterwards", async () => {
        await createAccount(gate, "timing@example.com", PASSWORD);
        // OWASP's parameters, as in production: what a caller times is dominated by the hash both paths pay.
        const { argon2Params } = await import("@/lib/password/hash");
        const { argon2Hasher } = await import("@/lib/password/hash");
        const testHasher = gate.hasher;
        Object.assign(gate, { hasher: argon2Hasher(argon2Params("owasp")) });
        const durations = { fresh: [] as number[], taken: [] as number[] };
        try {
          // Eleven interleaved pairs: a median of five was at the mercy of one busy moment on a loaded machine.
          for (let i = 0; i < 11; i++) {
            for (const kind of ["fresh", "taken"] as const) {
              const body = {
                email: kind === "fresh" ? `timing-${i}@example.com` : "timing@example.com",
                password: PASSWORD,
                altcha: await altchaPayload(),
              };
              await settled();
              const started = performance.now();
              expect((await routes.register(body)).status).toBe(202);
              durations[kind].push(performance.now() - started);
            }
          }
        } finally {
          Object.assign(gate, { hasher: testHasher });
        }
        const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
        const ratio = median(durations.taken) / median(durations.fresh);
        expect(ratio, JSON.stringify(durations)).toBeGreaterThan(0.67);
        expect(ratio, JSON.stringify(durations)).toBeLessThan(1.5);
      });
    });

    describe("verification", () => {
      it("an unverified account fails like a wrong password even for the right one, gets a fresh link, and is confirmed only with its password", async () => {
        expect((await register("unverified@example.com")).status).toBe(202);
        const first = linkTokenOf(await onlyMailTo("unverified@example.com", /confirm your email/i))!;

        // Each beside an address with no account at the same point of its history (after a first
        // failure, a new device's answer is a device confirmation, for any password).
        for (const password of ["not the passphrase", PASSWORD]) {
          const unknown = await browserSignIn("nobody-here@example.com", "not the passphrase");
          const res = await browserSignIn("unverified@example.com", password);
          expect(res.status, password).toBe(unknown.status);
          expect(comparableAnswer(await res.json())).toEqual(comparableAnswer(await unknown.json()));
          expect(sessionPairOf(res)).toBeNull();
        }
        await settled();
        const links = mailsTo("unverified@example.com", /confirm your email/i);
        expect(links).toHaveLength(2);
        const second = linkTokenOf(links[1]!)!;

        // A live link's page asks for the password as before.
        expect(await (await routes.previewVerify({ token: first })).json()).toEqual({ confirmed: false });
        // The mailbox alone does not confirm: the password chosen at registration is asked, and a wrong one does not spend the link.
        const wrong = await routes.verify({ token: first, password: "somebody else's guess" });
        expect(wrong.status).toBe(400);
        expect(await wrong.json()).toMatchObject({ error: "invalid_input", fields: { password: expect.any(String) } });
        // A confirmation is a sign-in: the same lock holds it (this suite locks at 3 failures) ...
        const locked = await routes.verify({ token: first, password: PASSWORD });
        expect(locked.status).toBe(429);
        expect(await locked.json()).toMatchObject({ error: "locked" });
        await gate.lockouts.reset(gate.usernameKey("unverified@example.com"));
        // ... and once it lifts, the older email's link still works (a person often opens the
        // first one), signs its owner in, and works once.
        const verified = await routes.verify({ token: first, password: PASSWORD });
        expect(verified.status).toBe(200);
        expect(await verified.json()).toMatchObject({ status: "email_verified", redirectTo: "/account?notice=email_verified" });
        expect(sessionPairOf(verified)).not.toBeNull();
        expect((await routes.verify({ token: first, password: PASSWORD })).status).toBe(400);
        // Once confirmed, the other link has nothing left to do, and says so like any dead link.
        expect(await (await routes.verify({ token: second, password: PASSWORD })).json()).toMatchObject({ error: "invalid_token" });
        // Its page learns beforehand that the address is confirmed, for either email, used or not
        // (issue 60: no password form under "expired"); a token of no confirmation link learns nothing.
        for (const token of [first, second]) expect(await (await routes.previewVerify({ token })).json()).toEqual({ confirmed: true });
        for (const token of ["x", second.replace(/^./, (c) => (c === "A" ? "B" : "A")), 42]) {
          const answer = await routes.previewVerify({ token });
          expect(answer.status).toBe(400);
          expect(await answer.json()).toMatchObject({ error: "invalid_token" });
        }
        // Another browser: the failures above left the username under attack, but the confirmation
        // proved the mailbox and ended that (issue 55): it signs straight in.
        expect((await browserSignIn("unverified@example.com", PASSWORD)).status).toBe(200);
      });

      it("tells the owner their own early sign-in as such, and confirming is their first sign-in: no new-device mail for it", async () => {
        expect((await register("early@example.com")).status).toBe(202);
        const token = linkTokenOf(await onlyMailTo("early@example.com", /confirm your email/i))!;
        // The right password before confirming: refused like a wrong one (the lockout counts it) ...
        expect((await browserSignIn("early@example.com", PASSWORD)).status).toBe(401);
        expect(
          (await gate.prisma.signInLockout.findUnique({ where: { usernameKey: gate.usernameKey("early@example.com") } }))?.failureCount,
        ).toBe(1);
        const confirmed = await routes.verify({ token, password: PASSWORD });
        expect(confirmed.status).toBe(200);
        const id = await userId("early@example.com");
        // ... but the owner's events name it honestly, and it is no "failed attempt" to warn about.
        const kinds = (await gate.events.recent(id)).map((event) => event.kind);
        expect(kinds).toEqual(expect.arrayContaining(["sign_in_unconfirmed", "email_verified", "sign_in_succeeded"]));
        expect(kinds).not.toContain("sign_in_failed");
        expect(await gate.events.failuresBeforeLatestSignIn(id)).toBe(0);
        await settled();
        expect(mailsTo("early@example.com", /new sign-in/i)).toHaveLength(0);
        // The next sign-in from another browser is news to the owner, and no more: the early attempt
        // was marked "under attack" like a failure (so its next try told nothing), and confirming
        // the address ended that, so it asks no code (issue 55).
        expect((await browserSignIn("early@example.com", PASSWORD)).status).toBe(200);
        await onlyMailTo("early@example.com", /new sign-in/i);
      });

      it("a confirmation from another site is refused (it would sign a browser in: login CSRF)", async () => {
        expect((await register("xsite@example.com")).status).toBe(202);
        const token = linkTokenOf(await onlyMailTo("xsite@example.com", /confirm your email/i))!;
        const shapes: Record<string, string>[] = [
          { "sec-fetch-site": "cross-site" },
          { "sec-fetch-site": "same-site" },
          { origin: "https://evil.example" },
        ];
        for (const headers of shapes) {
          const res = await routes.verify({ token, password: PASSWORD }, headers);
          expect(res.status, JSON.stringify(headers)).toBe(403);
          expect(sessionPairOf(res)).toBeNull();
        }
        expect((await routes.verify({ token, password: PASSWORD })).status).toBe(200);
      });

      it("the first-sign-in backfill counts every confirmed account as signed in before, even one whose events retention pruned", async () => {
        const { readFileSync } = await import("node:fs");
        const id = await createAccount(gate, "dormant@example.com", PASSWORD);
        await gate.prisma.securityEvent.deleteMany({ where: { userId: id } });
        await gate.prisma.user.update({ where: { id }, data: { firstSignedInAt: null } });
        const sql = readFileSync("prisma/migrations/20261201021000_first_sign_in/migration.sql", "utf8");
        await gate.prisma.$executeRawUnsafe(sql.slice(sql.indexOf("UPDATE")));
        expect((await gate.prisma.user.findUniqueOrThrow({ where: { id } })).firstSignedInAt).not.toBeNull();
        // So a stuffed password from a new device is news to its owner.
        expect((await browserSignIn("dormant@example.com", PASSWORD)).status).toBe(200);
        await onlyMailTo("dormant@example.com", /new sign-in/i);
      });

      it("two confirmations raced with the right password: one signs in, the other finds the link spent", async () => {
        expect((await register("raced@example.com")).status).toBe(202);
        const token = linkTokenOf(await onlyMailTo("raced@example.com", /confirm your email/i))!;
        const answers = await Promise.all([0, 1].map(() => routes.verify({ token, password: PASSWORD })));
        expect(answers.map((res) => res.status).sort()).toEqual([200, 400]);
        expect(answers.filter((res) => sessionPairOf(res) !== null)).toHaveLength(1);
        expect(await answers.find((res) => res.status === 400)!.json()).toMatchObject({ error: "invalid_token" });
      });

      it("'Send it again' mails a new link only to an account still waiting to be confirmed, within its quota", async () => {
        expect((await register("resend@example.com")).status).toBe(202);
        await onlyMailTo("resend@example.com", /confirm your email/i);
        await createAccount(gate, "resend-confirmed@example.com", PASSWORD);
        const before = smtp.received.length;
        const answers = [];
        for (const email of ["resend@example.com", "resend-confirmed@example.com", "resend-nobody@example.com"])
          answers.push(await answerOf(await routes.resendVerification(email)));
        expect(answers[0]!.status).toBe(202);
        expect(answers[1]).toEqual(answers[0]);
        expect(answers[2]).toEqual(answers[0]);
        await settled();
        // One new message, to the account that waits: nothing to a confirmed account or an unknown address.
        expect(smtp.received.slice(before).map(recipientOf)).toEqual(["resend@example.com"]);
        const links = mailsTo("resend@example.com", /confirm your email/i);
        expect(links).toHaveLength(2);
        expect((await routes.verify({ token: linkTokenOf(links[1]!)!, password: PASSWORD })).status).toBe(200);
        // recoveryMail allows 3 verification emails per account per hour: a third "send again" sends nothing.
        expect((await register("resend-quota@example.com")).status).toBe(202);
        for (let i = 0; i < 3; i++) expect((await routes.resendVerification("resend-quota@example.com")).status).toBe(202);
        await settled();
        expect(mailsTo("resend-quota@example.com", /confirm your email/i)).toHaveLength(3);
      });

      it("register-then-sign-in does not tell a free address from a taken one, on the browser route or the token API", async () => {
        await createAccount(gate, "probe-taken@example.com", PASSWORD);
        const PROBE = "an attacker's probing passphrase";
        const answers: Record<string, unknown[]> = {};
        for (const email of ["probe-free@example.com", "probe-taken@example.com"]) {
          expect((await register(email, PROBE)).status).toBe(202);
          const browser = await browserSignIn(email, PROBE);
          const api = await tokenSignIn(email, PROBE);
          answers[email] = [browser.status, comparableAnswer(await browser.json()), api.status, comparableAnswer(await api.json())];
        }
        expect(answers["probe-free@example.com"], JSON.stringify(answers)).toEqual(answers["probe-taken@example.com"]);
      });

      it("someone who registered another person's address cannot have that person confirm it", async () => {
        expect((await register("pre-hijacked@example.com", "the squatter's passphrase")).status).toBe(202);
        const token = linkTokenOf(await onlyMailTo("pre-hijacked@example.com", /confirm your email/i))!;
        // The address's owner opens the link and types their own password: nothing is confirmed.
        expect((await routes.verify({ token, password: PASSWORD })).status).toBe(400);
        const user = await gate.prisma.user.findUniqueOrThrow({ where: { email: "pre-hijacked@example.com" } });
        expect(user.emailVerifiedAt).toBeNull();
        // Registering it themselves tells them it is taken; a reset (which proves the mailbox) makes it theirs.
        expect((await register("pre-hijacked@example.com")).status).toBe(202);
        await onlyMailTo("pre-hijacked@example.com", /you already have an? .* account/i);
        expect((await forgot("pre-hijacked@example.com")).status).toBe(202);
        const reset = linkTokenOf(await onlyMailTo("pre-hijacked@example.com", /reset your/i))!;
        expect((await routes.reset({ token: reset, password: NEW_PASSWORD })).status).toBe(200);
        expect((await browserSignIn("pre-hijacked@example.com", NEW_PASSWORD)).status).toBe(200);
        expect((await browserSignIn("pre-hijacked@example.com", "the squatter's passphrase")).status).toBe(401);
      });
    });

    describe("password reset", () => {
      it("answers every address alike, and mails only an account's owner, with a link built from the configured URL (never the Host header)", async () => {
        await createAccount(gate, "forgetful@example.com", PASSWORD);
        const known = await answerOf(await forgot("forgetful@example.com", { host: "evil.example", "x-forwarded-host": "evil.example" }));
        const unknown = await answerOf(await forgot("no-account@example.com"));
        expect(known.status).toBe(202);
        expect(unknown).toEqual(known);
        const mail = await onlyMailTo("forgetful@example.com", /reset your/i);
        expect(mail.text).toContain("http://localhost:3000/reset-password#token=");
        expect(mail.text).not.toContain("evil.example");
        expect(mailsTo("no-account@example.com")).toHaveLength(0);
      });

      it("tells the link's holder the account's rule: another factor, a passkey; reading it spends nothing", async () => {
        const userId = await createAccount(gate, "previewed@example.com", PASSWORD);
        expect((await forgot("previewed@example.com")).status).toBe(202);
        const token = linkTokenOf(await onlyMailTo("previewed@example.com", /reset your/i))!;
        const preview = async () => (await routes.previewReset({ token })).json();
        expect(await preview()).toEqual({ account: "p•••@example.com", hasPasskey: false, hasOtherFactor: false });
        await gate.passkeys.add({
          userId,
          name: "Phone",
          nowMs: Date.now(),
          credentialId: "cHJldmlld2Vk",
          publicKey: new Uint8Array([1, 2, 3]),
          signCount: 0,
          transports: ["internal"],
          deviceType: "multiDevice",
          backedUp: true,
        });
        expect(await preview()).toEqual({ account: "p•••@example.com", hasPasskey: true, hasOtherFactor: true });
        // Another purpose's token, or a forged one, is the one invalid-link answer.
        const forged = await routes.previewReset({ token: `${token.slice(0, -2)}xx` });
        expect(forged.status).toBe(400);
        expect(await forged.json()).toMatchObject({ error: "invalid_token" });
        // Still unspent: the reset itself works, and then the preview is gone with the link.
        expect((await routes.reset({ token, password: "a brand new and long passphrase" })).status).toBe(200);
        expect((await routes.previewReset({ token })).status).toBe(400);
      });

      it("sets a new password under the rules, ends every session, refresh family and device, clears the lock, and knows this browser", async () => {
        await createAccount(gate, "resetter@example.com", PASSWORD);
        const before = await browserSignIn("resetter@example.com", PASSWORD);
        const session = sessionPairOf(before)!;
        const oldDevice = deviceCookieOf(before)!;
        const app = ((await (await tokenSignIn("resetter@example.com", PASSWORD)).json()) as { refresh_token: string }).refresh_token;
        for (let i = 0; i < 3; i++) await browserSignIn("resetter@example.com", "a wrong guess, again");
        expect((await browserSignIn("resetter@example.com", PASSWORD)).status).toBe(429);

        expect((await forgot("resetter@example.com")).status).toBe(202);
        const token = linkTokenOf(await onlyMailTo("resetter@example.com", /reset your/i))!;
        // A password the rules refuse does not spend the link.
        const weak = await routes.reset({ token, password: "passwordpassword" });
        expect(weak.status).toBe(400);
        expect(await weak.json()).toMatchObject({ error: "invalid_input", fields: { password: expect.any(String) } });

        const reset = await routes.reset({ token, password: NEW_PASSWORD });
        expect(reset.status).toBe(200);
        const device = deviceCookieOf(reset);
        expect(device).not.toBeNull();
        expect((await sessionWith(session)).body).toEqual({});
        expect((await refreshTokens(app)).status).toBe(401);
        expect((await routes.reset({ token, password: "yet another passphrase" })).status).toBe(400);

        // The lock is cleared, the old password is dead, the old device is forgotten.
        expect((await browserSignIn("resetter@example.com", PASSWORD)).status).toBe(401);
        expect((await browserSignIn("resetter@example.com", NEW_PASSWORD, { cookie: `gatehouse-device=${device}` })).status).toBe(200);
        expect(await gate.devices.isKnown(oldDevice, gate.clock())).toBe(false);
        expect((await gate.events.recent(await userId("resetter@example.com"))).map((event) => event.kind)).toContain("password_reset");
        await onlyMailTo("resetter@example.com", /password was reset/i);
      });

      it("a newer link and a password change each end an older link", async () => {
        await createAccount(gate, "twice@example.com", PASSWORD);
        await forgot("twice@example.com");
        await settled();
        await forgot("twice@example.com");
        await settled();
        const [older, newer] = mailsTo("twice@example.com", /reset your/i).map((mail) => linkTokenOf(mail)!);
        expect((await routes.reset({ token: older, password: NEW_PASSWORD })).status).toBe(400);

        // A password changed by other means (here: the admin path's UPDATE) ends the newer one too.
        await gate.prisma.user.update({ where: { email: "twice@example.com" }, data: { credentialGeneration: { increment: 1 } } });
        expect((await routes.reset({ token: newer, password: NEW_PASSWORD })).status).toBe(400);
      });

      it("a full mail queue keeps the link already in the owner's mailbox alive (no new link replaces it unsent)", async () => {
        await createAccount(gate, "queued@example.com", PASSWORD);
        await forgot("queued@example.com");
        const token = linkTokenOf(await onlyMailTo("queued@example.com", /reset your/i))!;
        const full = gate.mailer.full;
        Object.assign(gate.mailer, { full: () => true });
        try {
          expect((await forgot("queued@example.com")).status).toBe(202);
          await settled();
        } finally {
          Object.assign(gate.mailer, { full });
        }
        expect(await gate.emailTokens.find(token, "reset_password", gate.clock())).not.toBeNull();
      });

      it("lets exactly one of two concurrent uses of one link set its password", async () => {
        await createAccount(gate, "racer@example.com", PASSWORD);
        await forgot("racer@example.com");
        const token = linkTokenOf(await onlyMailTo("racer@example.com", /reset your/i))!;
        const results = await Promise.all([
          routes.reset({ token, password: "first racing passphrase" }),
          routes.reset({ token, password: "second racing passphrase" }),
        ]);
        expect(results.map((res) => res.status).sort()).toEqual([200, 400]);
      });
    });

    describe("unlock by email", () => {
      it("mails the owner once per lock episode; the link lets that browser past the strangers' lock, with the password still required", async () => {
        await createAccount(gate, "besieged@example.com", PASSWORD);
        for (let i = 0; i < 6; i++) await browserSignIn("besieged@example.com", "an attacker's guess");
        const mail = await onlyMailTo("besieged@example.com", /sign-in to your .* account is paused/i);
        const token = linkTokenOf(mail)!;
        expect(mail.text).toContain("/unlock#token=");
        expect((await browserSignIn("besieged@example.com", PASSWORD)).status).toBe(429);

        // The page names the account, masked, to the link's holder only, and reading it spends nothing.
        for (let i = 0; i < 2; i++) expect(await (await routes.previewUnlock({ token })).json()).toEqual({ account: "b•••@example.com" });
        const forged = await routes.previewUnlock({ token: `${token.slice(0, -2)}xx` });
        expect(forged.status).toBe(400);
        expect(await forged.json()).toMatchObject({ error: "invalid_token" });
        const unlocked = await routes.unlock({ token });
        expect(unlocked.status).toBe(200);
        expect((await routes.previewUnlock({ token })).status).toBe(400);
        const device = deviceCookieOf(unlocked)!;
        expect((await browserSignIn("besieged@example.com", "still a wrong guess", { cookie: `gatehouse-device=${device}` })).status).toBe(
          401,
        );
        expect((await browserSignIn("besieged@example.com", PASSWORD, { cookie: `gatehouse-device=${device}` })).status).toBe(200);
        // Strangers stay locked out, and the link works once.
        expect((await browserSignIn("besieged@example.com", PASSWORD)).status).toBe(429);
        expect((await routes.unlock({ token })).status).toBe(400);
      });

      it("'Email me a new link' mails a paused account's owner a new link under the recovery-mail quota, and nobody else", async () => {
        await createAccount(gate, "relocked@example.com", PASSWORD);
        await createAccount(gate, "not-locked@example.com", PASSWORD);
        for (let i = 0; i < 6; i++) await browserSignIn("relocked@example.com", "an attacker's guess");
        await onlyMailTo("relocked@example.com", /sign-in to your .* account is paused/i);

        const answers = [];
        for (const email of ["relocked@example.com", "not-locked@example.com", "ghost-asks@example.com"])
          answers.push(await answerOf(await routes.requestUnlock(email)));
        expect(answers[0]!.status).toBe(202);
        expect(answers[1]).toEqual(answers[0]);
        expect(answers[2]).toEqual(answers[0]);
        await settled();
        // Asking is answered by a link sent (issue 55): the lock's own email spent the security
        // notice's quota, and a request has the recovery mails' own, as many as the route allows.
        expect(mailsTo("relocked@example.com", /sign-in to your .* account is paused/i)).toHaveLength(2);
        expect(mailsTo("not-locked@example.com")).toHaveLength(0);

        // A lock whose own email was not sent (the quota then spent, say): asking mails a link, which works.
        await createAccount(gate, "locked-quietly@example.com", PASSWORD);
        const nowMs = Date.now();
        await gate.prisma.signInLockout.create({
          data: {
            usernameKey: gate.usernameKey("locked-quietly@example.com"),
            failureCount: 10,
            lastFailureAt: new Date(nowMs),
            lockedUntil: new Date(nowMs + 3_600_000),
          },
        });
        expect((await routes.requestUnlock("locked-quietly@example.com")).status).toBe(202);
        const mail = await onlyMailTo("locked-quietly@example.com", /sign-in to your .* account is paused/i);
        const unlocked = await routes.unlock({ token: linkTokenOf(mail)! });
        expect(unlocked.status).toBe(200);
        expect(deviceCookieOf(unlocked)).not.toBeNull();
      });

      it("an unlock link whose account was signed out everywhere while it was being used makes no device", async () => {
        await createAccount(gate, "unlock-race@example.com", PASSWORD);
        const { id, credentialGeneration } = await gate.prisma.user.findUniqueOrThrow({ where: { email: "unlock-race@example.com" } });
        const token = await gate.emailTokens.issue(id, "unlock", credentialGeneration, Date.now(), 3_600_000);
        // The operator's revoke-sessions lands after the link was checked, as it is spent.
        const use = gate.emailTokens.use.bind(gate.emailTokens);
        const spy = vi.spyOn(gate.emailTokens, "use").mockImplementationOnce(async (...args) => {
          await runAdminCommand(gate, "revoke-sessions", "unlock-race@example.com");
          return use(...args);
        });
        const res = await routes.unlock({ token }).finally(() => spy.mockRestore());
        expect(res.status).toBe(400);
        expect(deviceCookieOf(res)).toBeNull();
        expect(await gate.prisma.knownDevice.count({ where: { usernameKey: gate.usernameKey("unlock-race@example.com") } })).toBe(0);
      });

      it("sends nothing for a username without an account", async () => {
        const before = smtp.received.length;
        for (let i = 0; i < 4; i++) await browserSignIn("ghost@example.com", "a guess");
        await settled();
        expect(smtp.received.length).toBe(before);
      });
    });

    describe("notices", () => {
      it("mails a sign-in from a new device once (coalesced), not one from a known device", async () => {
        await createAccount(gate, "noticed@example.com", PASSWORD);
        const first = await browserSignIn("noticed@example.com", PASSWORD);
        await browserSignIn("noticed@example.com", PASSWORD);
        await browserSignIn("noticed@example.com", PASSWORD, { cookie: `gatehouse-device=${deviceCookieOf(first)}` });
        const mail = await onlyMailTo("noticed@example.com", /new sign-in/i);
        expect(mail.text).toMatch(/Network: 198\.51\.\d+\.x/);
      });

      it("mails and records a refresh-token reuse (the theft signal)", async () => {
        await createAccount(gate, "copied@example.com", PASSWORD);
        const { refresh_token } = (await (await tokenSignIn("copied@example.com", PASSWORD)).json()) as { refresh_token: string };
        expect((await refreshTokens(refresh_token)).status).toBe(200);
        expect((await refreshTokens(refresh_token)).status).toBe(401);
        await onlyMailTo("copied@example.com", /may have been copied/i);
        expect((await gate.events.recent(await userId("copied@example.com"))).map((event) => event.kind)).toContain("refresh_token_reused");
      });
    });

    describe("forgot password without JavaScript (issue 60)", () => {
      const post = async (body: string, site: string) =>
        (await import("@/app/api/no-script/[form]/route")).POST(
          new NextRequest("http://localhost/api/no-script/forgot-password", {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": site, [PEER_HEADER]: freshAddress() },
            body,
          }),
          { params: Promise.resolve({ form: "forgot-password" }) },
        );

      it("keeps the typed address in a cookie for that page, never in the URL, and only from the app's own page", async () => {
        const kept = await post("email=ki%2Bm%40example.com", "same-origin");
        expect(kept.status).toBe(303);
        expect(kept.headers.get("location")).toBe("/forgot-password?notice=javascript");
        expect(kept.headers.get("set-cookie")).toBe(
          "gatehouse-forgot-email=ki%2Bm%40example.com; Path=/forgot-password; Max-Age=300; HttpOnly; SameSite=Lax",
        );
        // Another site's form cannot fill the field, and nothing oversized is kept.
        expect((await post("email=ki%40example.com", "cross-site")).headers.get("set-cookie")).toBeNull();
        expect((await post(`email=${"a".repeat(250)}%40example.com`, "same-origin")).headers.get("set-cookie")).toBeNull();
      });
    });

    describe("bad links", () => {
      it.each([
        ["forged", { token: "A".repeat(43) }],
        ["truncated", { token: "A".repeat(42) }],
        ["oversized", { token: "A".repeat(600) }],
        ["not a string", { token: 12345 }],
        ["missing", {}],
      ])("answers a %s token with the one invalid-link 400, on every link route", async (_name, body) => {
        for (const route of [
          routes.verify,
          routes.unlock,
          routes.previewUnlock,
          (b: unknown) => routes.reset({ ...(b as object), password: NEW_PASSWORD }),
        ]) {
          const res = await route(body);
          expect(res.status).toBe(400);
          expect(await res.json()).toEqual({ error: "invalid_token", message: expect.stringMatching(/expired or was already used/) });
        }
      });

      it("answers malformed JSON and a wrong content type with a 4xx JSON error", async () => {
        expect((await routes.verify("{not json")).status).toBe(400);
        const res = await (
          await import("@/app/api/unlock/route")
        ).POST(
          new NextRequest("http://localhost/api/unlock", {
            method: "POST",
            headers: { "content-type": "text/plain", [PEER_HEADER]: freshAddress() },
            body: "token=x",
          }),
        );
        expect(res.status).toBe(415);
      });

      it("does not accept one purpose's link for another", async () => {
        await createAccount(gate, "crossed@example.com", PASSWORD);
        await forgot("crossed@example.com");
        const token = linkTokenOf(await onlyMailTo("crossed@example.com", /reset your/i))!;
        expect(await (await routes.verify({ token, password: PASSWORD })).json()).toMatchObject({ error: "invalid_token" });
        expect(await (await routes.unlock({ token })).json()).toMatchObject({ error: "invalid_token" });
        expect((await routes.reset({ token, password: NEW_PASSWORD })).status).toBe(200);
      });
    });

    describe("an SMTP outage", () => {
      it("answers requests as usual and delivers what waited once the server is back", async () => {
        await createAccount(gate, "patient@example.com", PASSWORD);
        await smtp.close();
        const started = performance.now();
        expect((await forgot("patient@example.com")).status).toBe(202);
        expect((await register("outage@example.com")).status).toBe(202);
        expect(performance.now() - started).toBeLessThan(5_000);
        await gate.background.idle();
        expect(gate.mailer.depth()).toBeGreaterThanOrEqual(2);
        await new Promise((resolve) => setTimeout(resolve, 300));
        smtp = await startMailbox(smtp.port);
        await settled();
        expect(mailsTo("patient@example.com", /reset your/i)).toHaveLength(1);
        expect(mailsTo("outage@example.com", /confirm your email/i)).toHaveLength(1);
      });
    });

    async function userId(email: string): Promise<string> {
      return (await gate.prisma.user.findUniqueOrThrow({ where: { email }, select: { id: true } })).id;
    }
  });
}

onEachDatabase("recovery by email", ({ label, makeDatabase }) => recoverySuite(label, makeDatabase));

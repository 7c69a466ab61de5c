import { createHash } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { NextRequest } from "next/server";
import {
  accountFormPost,
  altchaPayload,
  browserSignIn,
  comparableAnswer,
  createAccount,
  deviceCookieOf,
  resetByLink,
  sessionPairOf,
} from "../helpers/browser";
import { solve } from "../helpers/altcha";
import type { TestDatabase } from "../helpers/databases";
import { closeServed, servedGatehouse } from "../helpers/instance";
import { freshAddress, PEER_HEADER } from "../helpers/peer";
import { watchPasswordChecks } from "../helpers/verifications";
import { APP_GATEHOUSE, serve } from "@/lib/app";
import { forget, remember } from "@/lib/remember";
import { windowDeviceCode } from "@/lib/factors/device-confirmation";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = "the owner's new passphrase";
const OLD_PASSWORD = "the owner's old passphrase";
const NEW_PASSWORD = "a newer passphrase for the owner";

/**
 * The owner taken for the attacker (issue 55): a phone that keeps sending the old password after
 * a change (item 5: a repeated identical wrong password is counted once), and the owner who proved
 * the mailbox still treated as under attack (item 3). On an instance of their own whose rate limits
 * are high enough for the lockout, not the limiter, to be what the repeats meet.
 */
export function ownerShapes(current: () => { gate: Gate }, makeDatabase: () => Promise<TestDatabase>) {
  describe("the owner and the crowd (issue 55, items 3 and 5)", () => {
    let database: TestDatabase;
    let gate: Gate;
    let checks: Awaited<ReturnType<typeof watchPasswordChecks>>;

    beforeAll(async () => {
      database = await makeDatabase();
      gate = await servedGatehouse(database.url, {
        HASH_QUEUE: "100",
        RATE_LIMIT_SIGN_IN_USERNAME: "100/15m",
        RATE_LIMIT_SIGN_IN_ADDRESS: "100/15m",
        RATE_LIMIT_NEW_DEVICE_CHECKS: "100/15m",
        RATE_LIMIT_API_TOKEN: "100/1m",
        RATE_LIMIT_ALTCHA_CHALLENGE: "100/1m",
      });
      checks = await watchPasswordChecks(gate);
    });

    afterAll(async () => {
      await closeServed(gate);
      await database?.dispose();
      // The suite's own instance serves the routes again.
      forget(APP_GATEHOUSE);
      await remember(APP_GATEHOUSE, async () => serve(current().gate));
    });

    beforeEach(() => checks.reset());

    type LockRow = { failureCount: number; lastFailedAt: Date | null; wrongPasswords: string[] };
    async function lockRow(key: string): Promise<LockRow | null> {
      const [row] = await gate.sql.rows<LockRow>(
        `SELECT "failureCount", "lastFailedAt", "wrongPasswords" FROM "SignInLockout" WHERE "usernameKey" = $1`,
        [key],
      );
      return row ?? null;
    }
    const usernameRow = (email: string) => lockRow(gate.usernameKey(email));
    const locked = async (email: string) => (await gate.lockouts.check(gate.usernameKey(email), Date.now(), gate.config.lockout)).locked;
    const userOf = (email: string) => gate.prisma.user.findUniqueOrThrow({ where: { email } });

    /** The code a right password from a new device had mailed, as the owner reads it. */
    function watchCodes() {
      const codes: string[] = [];
      const spy = vi.spyOn(gate.recovery, "deviceCode").mockImplementation(async (user, { window }) => {
        const seed = (await gate.prisma.user.findUnique({ where: { id: user.id } }))?.deviceCodeSeed ?? "";
        codes.push(windowDeviceCode(gate.config.devices.codeSecret, user.id, seed, window));
      });
      return { codes, restore: () => spy.mockRestore() };
    }

    /**
     * The token API from one address, with a challenge fetched there (the level due grows with the
     * address's failures, as a client that keeps failing meets it).
     */
    async function tokenSignIn(email: string, password: string, options: { address?: string } = {}) {
      const address = options.address ?? freshAddress();
      const { GET } = await import("@/app/api/altcha/challenge/route");
      const challenge = await GET(new NextRequest("http://localhost/api/altcha/challenge", { headers: { [PEER_HEADER]: address } }));
      const altcha = await solve(await challenge.json());
      return post("/api/v1/authentication/token", { email, password, altcha }, { [PEER_HEADER]: address });
    }

    async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
      const route = (await import(`@/app${path}/route`)) as { POST: (request: NextRequest) => Promise<Response> };
      return route.POST(
        new NextRequest(`http://localhost${path}`, {
          method: "POST",
          headers: { "content-type": "application/json", [PEER_HEADER]: freshAddress(), ...headers },
          body: JSON.stringify(body),
        }),
      );
    }

    async function emailLink(email: string, purpose: "verify_email" | "unlock") {
      const { id, credentialGeneration } = await userOf(email);
      return gate.emailTokens.issue(id, purpose, credentialGeneration, Date.now(), 3_600_000);
    }

    describe("a repeated identical wrong password is counted once (item 5)", () => {
      it("the phone with the old password, 10 times from one address: counted once, never locked, Argon2id every time", async () => {
        await createAccount(gate, "phone@example.com", PASSWORD);
        const phone = freshAddress();
        const answers: unknown[] = [];
        for (let i = 0; i < 10; i++) {
          const res = await tokenSignIn("phone@example.com", OLD_PASSWORD, { address: phone });
          answers.push([res.status, comparableAnswer((await res.json()) as Record<string, unknown>)]);
        }
        expect(checks.verified()).toBe(10);
        expect((await usernameRow("phone@example.com"))?.failureCount).toBe(1);
        expect(await locked("phone@example.com")).toBe(false);
        // Every repeat answered as the second wrong password is: a stand-in, the username being under attack.
        expect(answers.slice(1).every((answer) => JSON.stringify(answer) === JSON.stringify(answers[1]))).toBe(true);
        expect(answers[1]).toMatchObject([401, { error: "device_confirmation_required" }]);

        // The right password from the phone then signs in, by the code mailed to the owner.
        const mail = watchCodes();
        const right = await tokenSignIn("phone@example.com", PASSWORD, { address: phone });
        mail.restore();
        const { confirmation_token } = (await right.json()) as { confirmation_token: string };
        const done = await post("/api/v1/authentication/token/confirm-device", { confirmation_token, code: mail.codes[0] });
        expect(done.status, await done.clone().text()).toBe(200);
        expect(await done.json()).toHaveProperty("access_token");
        // The success clears the count and the fingerprints with it.
        expect(await usernameRow("phone@example.com")).toMatchObject({ failureCount: 0, wrongPasswords: [] });
      });

      it("a repeat answers as a wrong password that is not a repeat: the same status and body", async () => {
        for (const email of ["twin-a@example.com", "twin-b@example.com"]) await createAccount(gate, email, PASSWORD);
        const address = freshAddress();
        await tokenSignIn("twin-a@example.com", OLD_PASSWORD, { address });
        await tokenSignIn("twin-b@example.com", "another wrong one", { address });
        const repeat = await tokenSignIn("twin-a@example.com", OLD_PASSWORD, { address });
        const fresh = await tokenSignIn("twin-b@example.com", "a third wrong one", { address });
        expect(repeat.status).toBe(fresh.status);
        expect(comparableAnswer((await repeat.json()) as Record<string, unknown>)).toEqual(
          comparableAnswer((await fresh.json()) as Record<string, unknown>),
        );
        expect((await usernameRow("twin-a@example.com"))?.failureCount).toBe(1);
        expect((await usernameRow("twin-b@example.com"))?.failureCount).toBe(2);
      });

      it("five distinct wrong passwords from one address still lock, and then a repeat is refused without Argon2id", async () => {
        await createAccount(gate, "distinct@example.com", PASSWORD);
        const address = freshAddress();
        for (let i = 0; i < 5; i++) await tokenSignIn("distinct@example.com", `wrong guess ${i}`, { address });
        expect(await locked("distinct@example.com")).toBe(true);
        checks.reset();
        const repeat = await tokenSignIn("distinct@example.com", "wrong guess 4", { address });
        expect(repeat.status).toBe(429);
        expect(await repeat.json()).toMatchObject({ error: "locked" });
        expect(checks.verified()).toBe(0);
      });

      it("a repeat from another address is counted: a stranger cannot learn what the owner's phone sent", async () => {
        await createAccount(gate, "scoped@example.com", PASSWORD);
        await tokenSignIn("scoped@example.com", OLD_PASSWORD, { address: freshAddress() });
        await tokenSignIn("scoped@example.com", OLD_PASSWORD, { address: freshAddress() });
        expect((await usernameRow("scoped@example.com"))?.failureCount).toBe(2);
      });

      it("parallel distinct guesses from an address whose wrong password is fingerprinted are still bounded by the count", async () => {
        await createAccount(gate, "racing@example.com", PASSWORD);
        const address = freshAddress();
        await tokenSignIn("racing@example.com", OLD_PASSWORD, { address });
        checks.reset();
        const guesses = Array.from({ length: 10 }, (_, i) => tokenSignIn("racing@example.com", `parallel guess ${i}`, { address }));
        const statuses = (await Promise.all(guesses)).map((res) => res.status);
        // Four more reach the threshold; the rest meet the lock, whatever their order.
        expect(checks.verified()).toBe(4);
        expect(statuses.filter((status) => status === 429)).toHaveLength(6);
        expect(await locked("racing@example.com")).toBe(true);
      });

      it("the same wrong password sent in parallel is counted at most as distinct guesses would be", async () => {
        await createAccount(gate, "burst@example.com", PASSWORD);
        const address = freshAddress();
        await Promise.all(Array.from({ length: 10 }, () => tokenSignIn("burst@example.com", OLD_PASSWORD, { address })));
        const count = (await usernameRow("burst@example.com"))!.failureCount;
        // Repeats racing the fingerprint's write may each be counted (never more than the lock allows).
        expect(count).toBeGreaterThanOrEqual(1);
        expect(count).toBeLessThanOrEqual(gate.config.lockout.threshold);
      });

      it("stores a keyed, truncated fingerprint, never a hash an offline attacker could test", async () => {
        await createAccount(gate, "stored@example.com", PASSWORD);
        const [first, second] = [freshAddress(), freshAddress()];
        await tokenSignIn("stored@example.com", OLD_PASSWORD, { address: first });
        await tokenSignIn("stored@example.com", OLD_PASSWORD, { address: second });
        const { wrongPasswords } = (await usernameRow("stored@example.com"))!;
        expect(wrongPasswords).toHaveLength(2);
        // 64 bits each, and one per client: the same password from two addresses leaves two values.
        for (const value of wrongPasswords) expect(value).toMatch(/^[A-Za-z0-9_-]{11}$/);
        expect(new Set(wrongPasswords).size).toBe(2);
        const unkeyed = ["sha256", "sha1", "md5"].flatMap((algorithm) =>
          ["hex", "base64url"].map((encoding) =>
            createHash(algorithm)
              .update(OLD_PASSWORD)
              .digest(encoding as "hex" | "base64url"),
          ),
        );
        for (const value of wrongPasswords) for (const digest of unkeyed) expect(digest).not.toContain(value);
      });

      it("keeps the last three per username, and only for the lock's window", async () => {
        await createAccount(gate, "window@example.com", PASSWORD);
        const address = freshAddress();
        for (let i = 0; i < 4; i++) await tokenSignIn("window@example.com", `typo ${i}`, { address });
        expect((await usernameRow("window@example.com"))!.wrongPasswords).toHaveLength(3);
        // The oldest is forgotten: sent again, it counts.
        await tokenSignIn("window@example.com", "typo 0", { address });
        expect((await usernameRow("window@example.com"))!.failureCount).toBe(5);
        await gate.lockouts.reset(gate.usernameKey("window@example.com"));

        // Once the streak has gone quiet, a fingerprint from it no longer spares a repeat.
        await tokenSignIn("window@example.com", OLD_PASSWORD, { address });
        await gate.prisma.signInLockout.update({
          where: { usernameKey: gate.usernameKey("window@example.com") },
          data: { lastFailureAt: new Date(Date.now() - gate.config.lockout.quietPeriodMs - 1_000) },
        });
        await tokenSignIn("window@example.com", OLD_PASSWORD, { address });
        expect(await usernameRow("window@example.com")).toMatchObject({ failureCount: 1, wrongPasswords: [expect.any(String)] });
      });

      it("forgets a username's fingerprints with a password change and a reset", async () => {
        await createAccount(gate, "changes@example.com", PASSWORD);
        // The owner's laptop, a known device: a change from it leaves the strangers' count as it is.
        const laptop = await browserSignIn("changes@example.com", PASSWORD);
        const session = sessionPairOf(laptop)!;
        const cookie = { cookie: `${session}; gatehouse-device=${deviceCookieOf(laptop)!}` };
        const phone = freshAddress();
        await tokenSignIn("changes@example.com", OLD_PASSWORD, { address: phone });
        expect((await usernameRow("changes@example.com"))!.wrongPasswords).toHaveLength(1);
        const fields = { currentPassword: PASSWORD, newPassword: NEW_PASSWORD, altcha: await altchaPayload() };
        const changed = await accountFormPost(gate, "/api/account/password", session, fields, cookie);
        expect(changed.status, await changed.clone().text()).toBeLessThan(400);
        expect(await usernameRow("changes@example.com")).toMatchObject({ failureCount: 1, wrongPasswords: [] });

        await tokenSignIn("changes@example.com", OLD_PASSWORD, { address: phone });
        expect((await usernameRow("changes@example.com"))!.wrongPasswords).toHaveLength(1);
        expect((await resetByLink(gate, (await userOf("changes@example.com")).id, PASSWORD)).status).toBe(200);
        expect(await usernameRow("changes@example.com")).toBeNull();
      });
    });

    describe("proof of the mailbox ends 'under attack' for the owner (item 3)", () => {
      /** A sign-in from a browser the account has never seen, at an address of its own. */
      const newDevice = (email: string, password = PASSWORD) => browserSignIn(email, password, { address: freshAddress() });

      async function expectSession(res: Response) {
        expect(res.status, await res.clone().text()).toBe(200);
        expect(res.headers.getSetCookie().some((value) => /session-token=[^;]+/.test(value))).toBe(true);
      }

      it("a stranger's wrong password still marks the username under attack: a new device then waits for a code", async () => {
        await createAccount(gate, "attacked@example.com", PASSWORD);
        expect((await newDevice("attacked@example.com", "a stuffed password")).status).toBe(401);
        expect((await usernameRow("attacked@example.com"))!.lastFailedAt).not.toBeNull();
        const res = await newDevice("attacked@example.com");
        expect(res.status).toBe(401);
        expect(await res.json()).toMatchObject({ error: "device_confirmation_required" });
      });

      it("the unconfirmed owner's right password: refused like a wrong one, now and at the next try; confirming ends 'under attack'", async () => {
        for (const email of ["early@example.com", "early-twin@example.com"]) {
          await createAccount(gate, email, PASSWORD);
          await gate.prisma.user.update({ where: { email }, data: { emailVerifiedAt: null } });
        }
        // The twin is whoever registered an address that had an account: their password is wrong.
        // Neither this answer nor the next may tell the two apart, so both mark the username alike.
        for (let attempt = 0; attempt < 2; attempt++) {
          const right = await newDevice("early@example.com");
          const wrong = await newDevice("early-twin@example.com", "not the password");
          expect(right.status).toBe(wrong.status);
          expect(comparableAnswer((await right.json()) as Record<string, unknown>)).toEqual(
            comparableAnswer((await wrong.json()) as Record<string, unknown>),
          );
        }
        expect((await usernameRow("early@example.com"))!.lastFailedAt).not.toBeNull();

        // Confirmed, the owner's next new device signs straight in.
        const token = await emailLink("early@example.com", "verify_email");
        const confirmed = await post("/api/email/verify", { token, password: PASSWORD }, { "sec-fetch-site": "same-origin" });
        expect(confirmed.status, await confirmed.clone().text()).toBe(200);
        expect(await usernameRow("early@example.com")).toMatchObject({ failureCount: 0, lastFailedAt: null });
        await expectSession(await newDevice("early@example.com"));
      });

      it("confirming the address after a stranger's failure ends 'under attack'", async () => {
        await createAccount(gate, "confirms@example.com", PASSWORD);
        await gate.prisma.user.update({ where: { email: "confirms@example.com" }, data: { emailVerifiedAt: null } });
        await newDevice("confirms@example.com", "a stranger's guess");
        expect((await usernameRow("confirms@example.com"))!.lastFailedAt).not.toBeNull();
        const token = await emailLink("confirms@example.com", "verify_email");
        expect((await post("/api/email/verify", { token, password: PASSWORD }, { "sec-fetch-site": "same-origin" })).status).toBe(200);
        expect(await usernameRow("confirms@example.com")).toMatchObject({ failureCount: 0, lastFailedAt: null });
        await expectSession(await newDevice("confirms@example.com"));
      });

      it("a completed reset ends 'under attack'", async () => {
        await createAccount(gate, "resets@example.com", PASSWORD);
        await newDevice("resets@example.com", "a stranger's guess");
        expect((await resetByLink(gate, (await userOf("resets@example.com")).id, NEW_PASSWORD)).status).toBe(200);
        await expectSession(await newDevice("resets@example.com", NEW_PASSWORD));
      });

      it("a used unlock link ends 'under attack' (the strangers' count stays: the link signs nobody in)", async () => {
        await createAccount(gate, "unlocks@example.com", PASSWORD);
        for (const guess of ["guess one", "guess two"]) await newDevice("unlocks@example.com", guess);
        expect((await usernameRow("unlocks@example.com"))!.lastFailedAt).not.toBeNull();
        const token = await emailLink("unlocks@example.com", "unlock");
        expect((await post("/api/unlock", { token })).status).toBe(200);
        expect(await usernameRow("unlocks@example.com")).toMatchObject({ failureCount: 2, lastFailedAt: null });
        await expectSession(await newDevice("unlocks@example.com"));
      });
    });
  });
}

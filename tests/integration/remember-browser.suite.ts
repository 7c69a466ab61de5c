import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { totpCodeAt } from "@/lib/factors/totp";
import { rememberDigest } from "@/lib/devices/remember";
import { accountFormPost, createAccount, signedInBrowser, tokenSignIn } from "../helpers/browser";
import { softAuthenticator } from "../helpers/webauthn";
import type { TestDatabase } from "../helpers/databases";
import { servedForSuite } from "../helpers/served-suite";
import { onEachDatabase } from "../helpers/each-database";
import {
  emptyJar,
  ownerWithApp,
  REMEMBER_PASSWORD,
  passwordFrom,
  rememberedBrowser,
  rememberValue,
  stepFrom,
  type Jar,
} from "../helpers/remember";

type Gate = import("@/lib/app").Gatehouse;

const PASSWORD = REMEMBER_PASSWORD;

/**
 * "Remember this browser" (issue 57, item 5) through the real sign-in, second-step and account
 * routes and a real database: offered with the factor's step, granted by an app code or a passkey
 * with the box ticked, honoured for the password of that browser only, rotated at each use, and
 * ended by what changes who may skip the step (docs/decisions/0033).
 */
export function rememberBrowserSuite(label: string, makeDatabase: () => Promise<TestDatabase>) {
  describe(`remember this browser on ${label}`, () => {
    const served = servedForSuite(makeDatabase, [], "unused");
    let gate: Gate;
    beforeAll(() => {
      gate = served.gate;
    });
    afterEach(() => vi.restoreAllMocks());
    const authenticator = softAuthenticator({ origin: "http://localhost:3000" });

    const kindsOf = async (userId: string) => (await gate.events.recent(userId, 50)).map((event) => event.kind);
    const rowsOf = (email: string) => gate.prisma.knownDevice.findMany({ where: { usernameKey: gate.usernameKey(email) } });
    const accountPost = (jar: Jar, path: string, fields: Record<string, string> = {}) =>
      accountFormPost(gate, path, jar.session!, fields, { cookie: [jar.session, jar.device, jar.remember].filter(Boolean).join("; ") });

    it("offers the box with the factor's step, grants it after an app code, and the next password skips the step", async () => {
      const { userId, secret } = await ownerWithApp(gate, "granted@example.com");
      const first = await passwordFrom(emptyJar(), "granted@example.com");
      expect(first.res.status).toBe(401);
      expect(await first.res.json()).toMatchObject({ error: "mfa_required", rememberDays: 30 });
      const step = await stepFrom(first.jar, first.pending, { code: totpCodeAt(secret, Date.now()), remember: true });
      expect(step.res.status).toBe(200);
      const jar = step.jar;
      expect(rememberValue(jar)).toMatch(/^[A-Za-z0-9_-]{43}$/);
      // Only a digest is stored, on the row of the device this browser now holds.
      const rows = (await rowsOf("granted@example.com")).filter((row) => row.rememberDigest !== null);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.rememberDigest).toBe(rememberDigest(rememberValue(jar)!));
      expect(rows[0]!.rememberDigest).not.toContain(rememberValue(jar)!);
      expect(rows[0]!.rememberUntil!.getTime()).toBeGreaterThan(Date.now() + 29 * 86_400_000);
      expect(await kindsOf(userId)).toContain("browser_remembered");

      const again = await passwordFrom(jar, "granted@example.com");
      expect(again.res.status, await again.res.clone().text()).toBe(200);
      expect(again.jar.session).not.toBe(jar.session);
      // Rotated: a new secret, on the row that replaced the device, with the same end.
      expect(rememberValue(again.jar)).not.toBe(rememberValue(jar));
      const after = (await rowsOf("granted@example.com")).filter((row) => row.rememberDigest !== null);
      expect(after).toHaveLength(1);
      expect(after[0]!.rememberDigest).toBe(rememberDigest(rememberValue(again.jar)!));
      expect(after[0]!.rememberUntil!.getTime()).toBe(rows[0]!.rememberUntil!.getTime());
      expect(await kindsOf(userId)).toContain("second_step_remembered");
      // A wrong password on the remembered browser is still a wrong password.
      expect((await passwordFrom(again.jar, "granted@example.com", "not the passphrase")).res.status).toBe(401);
      // The old pair of cookies (a copy taken before that sign-in) is dead.
      const stale = await passwordFrom(jar, "granted@example.com");
      expect(stale.res.status).toBe(401);
      expect(await stale.res.json()).toMatchObject({ error: "mfa_required" });
    });

    it("grants nothing without the box, and nothing to an API client", async () => {
      const { secret } = await ownerWithApp(gate, "unticked@example.com");
      const first = await passwordFrom(emptyJar(), "unticked@example.com");
      const step = await stepFrom(first.jar, first.pending, { code: totpCodeAt(secret, Date.now()) });
      expect(step.res.status).toBe(200);
      expect(step.jar.remember).toBeNull();
      expect((await rowsOf("unticked@example.com")).every((row) => row.rememberDigest === null)).toBe(true);
      expect((await passwordFrom(step.jar, "unticked@example.com")).res.status).toBe(401);
    });

    it("never lets the token API skip the step, whatever device token it sends", async () => {
      const { secret } = await ownerWithApp(gate, "api@example.com");
      const jar = await rememberedBrowser("api@example.com", secret);
      const deviceToken = jar.device!.split("=")[1]!;
      const res = await tokenSignIn("api@example.com", PASSWORD, { deviceToken });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: "mfa_required" });
    });

    it("grants after a passkey as the second step", async () => {
      await createAccount(gate, "passkey@example.com", PASSWORD);
      const owner = await signedInBrowser("passkey@example.com", PASSWORD);
      const post = (path: string, fields: Record<string, string>) => accountFormPost(gate, path, owner, fields);
      const optionsRes = await post("/api/account/passkeys/options", { purpose: "register" });
      const { response, passkey } = await authenticator.register(
        ((await optionsRes.json()) as { options: Parameters<typeof authenticator.register>[0] }).options,
      );
      expect((await post("/api/account/passkeys", { credential: JSON.stringify(response) })).status).toBe(200);
      expect((await post("/api/account/passkeys/second-factor", { on: "true" })).status).toBe(200);

      const first = await passwordFrom(emptyJar(), "passkey@example.com");
      expect(await first.res.clone().json()).toMatchObject({
        error: "mfa_required",
        methods: ["passkey", "recovery_code"],
        rememberDays: 30,
      });
      const options = await stepFrom(first.jar, first.pending, {}, "/api/auth/second-step/passkey/options");
      const assertion = await authenticator.authenticate(
        passkey,
        ((await options.res.json()) as { options: Parameters<typeof authenticator.authenticate>[1] }).options,
      );
      const done = await stepFrom(first.jar, first.pending, { credential: assertion, remember: true }, "/api/auth/second-step/passkey");
      expect(done.res.status, await done.res.clone().text()).toBe(200);
      expect(done.jar.remember).not.toBeNull();
      expect((await passwordFrom(done.jar, "passkey@example.com")).res.status).toBe(200);
    });

    it("ends with a factor change and 'Sign out everywhere'", async () => {
      const { secret } = await ownerWithApp(gate, "ended@example.com");
      // New recovery codes: a factor change.
      let jar = await rememberedBrowser("ended@example.com", secret);
      let signedIn = await passwordFrom(jar, "ended@example.com");
      expect(signedIn.res.status).toBe(200);
      jar = signedIn.jar;
      expect((await accountPost(jar, "/api/account/recovery-codes")).status).toBe(200);
      expect((await passwordFrom(jar, "ended@example.com")).res.status).toBe(401);

      // "Sign out everywhere": this browser's grant goes too.
      jar = await rememberedBrowser("ended@example.com", secret, Date.now() + 30_000);
      signedIn = await passwordFrom(jar, "ended@example.com");
      expect(signedIn.res.status).toBe(200);
      jar = signedIn.jar;
      expect((await accountPost(jar, "/api/account/sessions/revoke-others")).status).toBe(303);
      expect((await passwordFrom(jar, "ended@example.com")).res.status).toBe(401);
      expect((await rowsOf("ended@example.com")).every((row) => row.rememberDigest === null)).toBe(true);
    });

    it("is off at SECOND_STEP_REMEMBER_DAYS=0: not offered, not granted, a grant from before not honoured", async () => {
      const { secret } = await ownerWithApp(gate, "off@example.com");
      const jar = await rememberedBrowser("off@example.com", secret);
      const devices = gate.config.devices as { rememberMs: number };
      const rememberMs = devices.rememberMs;
      devices.rememberMs = 0;
      try {
        const asked = await passwordFrom(jar, "off@example.com");
        expect(asked.res.status).toBe(401);
        expect(await asked.res.json()).not.toHaveProperty("rememberDays");
        const step = await stepFrom(asked.jar, asked.pending, { code: totpCodeAt(secret, Date.now() + 30_000), remember: true });
        expect(step.res.status).toBe(200);
        expect(step.jar.remember).toBe(jar.remember);
      } finally {
        devices.rememberMs = rememberMs;
      }
    });

    it("ends with 'Forget device'", async () => {
      const { secret } = await ownerWithApp(gate, "forgot@example.com");
      const jar = await rememberedBrowser("forgot@example.com", secret);
      const signedIn = await passwordFrom(jar, "forgot@example.com");
      expect(signedIn.res.status).toBe(200);
      const id = gate.devices.signed(signedIn.jar.device!.split("=")[1], gate.usernameKey("forgot@example.com"), Date.now())!.id;
      const forgot = await accountPost(signedIn.jar, "/api/account/devices/forget", { id, json: "true" });
      expect(forgot.status, await forgot.clone().text()).toBe(200);
      const next = await passwordFrom(signedIn.jar, "forgot@example.com");
      expect(next.res.status).toBe(401);
      expect(await next.res.json()).toMatchObject({ error: "mfa_required" });
    });
  });
}

onEachDatabase("remember this browser", ({ label, makeDatabase }) => rememberBrowserSuite(label, makeDatabase));

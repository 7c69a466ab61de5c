import { afterEach, describe, expect, it, vi } from "vitest";
import { totpCodeAt } from "@/lib/factors/totp";
import { tokenSignIn } from "../helpers/browser";
import {
  changePasswordFrom,
  emptyJar,
  ownerWithApp,
  passwordFrom,
  REMEMBER_PASSWORD,
  rememberedBrowser,
  stepFrom,
  type Jar,
} from "../helpers/remember";

type Gate = import("@/lib/app").Gatehouse;

const NEW_PASSWORD = "a brand new passphrase for this";

/**
 * "Remember this browser" (issue 57, item 5) as an attacker would use it: its cookie copied into
 * another jar, a forged secret, a recovery code, a double use, the account under attack, and the
 * owner's password change (docs/decisions/0033). The password is asked every time; at most the
 * second step is skipped, and only where the decision record says.
 */
export function rememberShapes(current: () => { gate: Gate }) {
  const gate = () => current().gate;

  describe("remember this browser (issue 57)", () => {
    afterEach(() => vi.restoreAllMocks());

    const askedForTheStep = async (res: Response) => {
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: "mfa_required" });
    };
    const grantsOf = async (email: string) =>
      (await gate().prisma.knownDevice.findMany({ where: { usernameKey: gate().usernameKey(email), rememberDigest: { not: null } } }))
        .length;

    it("a remember cookie copied into another jar is worth nothing, with or without that jar's own device of the account", async () => {
      const { secret } = await ownerWithApp(gate(), "remember-copied@example.com");
      const owner = await rememberedBrowser("remember-copied@example.com", secret);
      // Another browser of the same account: a known device of its own, passed with the next step's code.
      const other = await passwordFrom(emptyJar(), "remember-copied@example.com");
      const otherJar = (await stepFrom(other.jar, other.pending, { code: totpCodeAt(secret, Date.now() + 30_000) })).jar;
      expect(otherJar.device).not.toBeNull();
      const planted: Jar = { ...otherJar, remember: owner.remember };
      await askedForTheStep((await passwordFrom(planted, "remember-copied@example.com")).res);
      // A jar with no device cookie at all: a new device.
      await askedForTheStep((await passwordFrom({ ...emptyJar(), remember: owner.remember }, "remember-copied@example.com")).res);
      // The owner's own browser still skips the step: the copies spent nothing.
      expect((await passwordFrom(owner, "remember-copied@example.com")).res.status).toBe(200);
    });

    it("a forged secret beside the right device cookie is no grant", async () => {
      const { secret } = await ownerWithApp(gate(), "remember-forged@example.com");
      const owner = await rememberedBrowser("remember-forged@example.com", secret);
      const forged: Jar = { ...owner, remember: `gatehouse-remember=${"A".repeat(43)}` };
      await askedForTheStep((await passwordFrom(forged, "remember-forged@example.com")).res);
      const oversized: Jar = { ...owner, remember: `gatehouse-remember=${"A".repeat(500)}` };
      await askedForTheStep((await passwordFrom(oversized, "remember-forged@example.com")).res);
    });

    it("the whole jar copied skips the step once, with the password; then the owner's copy is dead and is asked", async () => {
      const { secret } = await ownerWithApp(gate(), "remember-jar@example.com");
      const owner = await rememberedBrowser("remember-jar@example.com", secret);
      const thief = await passwordFrom({ ...owner }, "remember-jar@example.com");
      expect(thief.res.status).toBe(200);
      // The thief's sign-in replaced the device row and rotated the secret: the owner's cookies name nothing now.
      await askedForTheStep((await passwordFrom(owner, "remember-jar@example.com")).res);
      // Without the password the copied jar is nothing at all.
      expect((await passwordFrom(thief.jar, "remember-jar@example.com", "a guessed passphrase")).res.status).toBe(401);
    });

    it("a recovery code never remembers the browser, even when asked to", async () => {
      const { recoveryCodes } = await ownerWithApp(gate(), "remember-recovery@example.com");
      const first = await passwordFrom(emptyJar(), "remember-recovery@example.com");
      const step = await stepFrom(first.jar, first.pending, { recoveryCode: recoveryCodes[0], remember: true });
      expect(step.res.status, await step.res.clone().text()).toBe(200);
      expect(step.jar.remember).toBeNull();
      expect(await grantsOf("remember-recovery@example.com")).toBe(0);
      await askedForTheStep((await passwordFrom(step.jar, "remember-recovery@example.com")).res);
    });

    it("a malformed box is a 400 and spends nothing", async () => {
      const { secret } = await ownerWithApp(gate(), "remember-shape@example.com");
      const first = await passwordFrom(emptyJar(), "remember-shape@example.com");
      const bad = await stepFrom(first.jar, first.pending, { code: totpCodeAt(secret, Date.now()), remember: "yes" });
      expect(bad.res.status).toBe(400);
      const good = await stepFrom(first.jar, first.pending, { code: totpCodeAt(secret, Date.now()), remember: true });
      expect(good.res.status).toBe(200);
    });

    it("two sign-ins at once on one remembered jar: one skips the step, the other is asked", async () => {
      const { secret } = await ownerWithApp(gate(), "remember-double@example.com");
      const owner = await rememberedBrowser("remember-double@example.com", secret);
      const answers = await Promise.all([
        passwordFrom(owner, "remember-double@example.com"),
        passwordFrom(owner, "remember-double@example.com"),
      ]);
      expect(answers.map((answer) => answer.res.status).sort()).toEqual([200, 401]);
      expect(await grantsOf("remember-double@example.com")).toBe(1);
    });

    it("is suspended while the username is under attack, not spent, and back once the mark is gone", async () => {
      const { secret } = await ownerWithApp(gate(), "remember-attacked@example.com");
      const owner = await rememberedBrowser("remember-attacked@example.com", secret);
      // A stranger's wrong password marks the username under attack.
      expect((await tokenSignIn("remember-attacked@example.com", "a stranger's guess")).status).toBe(401);
      await askedForTheStep((await passwordFrom(owner, "remember-attacked@example.com")).res);
      expect(await grantsOf("remember-attacked@example.com")).toBe(1);
      // Proof of the mailbox ends the mark (lib/auth/sign-in.ts, confirmedByLink): the grant holds again.
      await gate().lockouts.clearUnderAttack(gate().usernameKey("remember-attacked@example.com"));
      expect((await passwordFrom(owner, "remember-attacked@example.com")).res.status).toBe(200);
    });

    it("a password change ends it: the new password from the same browser is asked the step", async () => {
      const { secret } = await ownerWithApp(gate(), "remember-changed@example.com");
      const remembered = await rememberedBrowser("remember-changed@example.com", secret);
      const signedIn = await passwordFrom(remembered, "remember-changed@example.com");
      expect(signedIn.res.status).toBe(200);
      const changed = await changePasswordFrom(gate(), signedIn.jar, REMEMBER_PASSWORD, NEW_PASSWORD);
      expect(changed.res.status, await changed.res.clone().text()).toBeLessThan(400);
      expect(await grantsOf("remember-changed@example.com")).toBe(0);
      await askedForTheStep((await passwordFrom(changed.jar, "remember-changed@example.com", NEW_PASSWORD)).res);
    });
  });
}

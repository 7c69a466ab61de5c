import { busy } from "@/lib/http/refusals";
import type { PasswordProblem } from "@/lib/password/rules";
import { hasOtherFactor, storeNewPassword } from "@/lib/users/accounts";
import { newPasswordRules } from "./credentials";
import type { Gatehouse } from "./gatehouse";

export const BREACHED_PASSWORD =
  "This password has appeared in a data breach, so attackers try it on every site first. Choose another one, used nowhere else.";

/**
 * The corpus's opinion of a new password (BREACHED_PASSWORDS_URL), after the rules. Unknown (off,
 * slow, down, garbage) passes: the rules already stand, and no one's password waits on a third party.
 */
export async function breachedProblem(gate: Pick<Gatehouse, "breachedPasswords">, password: string): Promise<PasswordProblem | null> {
  return (await gate.breachedPasswords.check(password)) === "breached" ? { rule: "breached", message: BREACHED_PASSWORD } : null;
}

/**
 * Everything a new password of an existing account must pass, in one place (the reset link and the
 * change form): the rules at this account's length (15, or 8 with another factor), not the
 * password it replaces, not in the breach corpus.
 */
export async function newPasswordProblem(
  gate: Pick<Gatehouse, "breachedPasswords" | "prisma">,
  password: string,
  account: { userId: string; email: string; currentPassword?: string; removesOtherFactors?: boolean },
): Promise<PasswordProblem | null> {
  const owner = {
    email: account.email,
    hasOtherFactor: account.removesOtherFactors !== true && (await hasOtherFactor(gate.prisma, account.userId)),
  };
  const problem = newPasswordRules(password, owner);
  if (problem) return problem;
  // NFC on both sides, as the hasher compares them.
  if (account.currentPassword !== undefined && password.normalize("NFC") === account.currentPassword.normalize("NFC"))
    return { rule: "unchanged", message: "Choose a password different from your current one." };
  return breachedProblem(gate, password);
}

/** Where a new hash goes: the signed-in owner's account, or the account of a live reset link (spent in the same statement). */
export type PasswordTarget = { userId: string } | { resetLinkId: string };

export type Replaced = { ok: true; userId: string; email: string; credentialGeneration: number } | { ok: false; refusal: Response | null };

/**
 * The one way a password is replaced (the change form, a reset link): hashed in a hash-budget slot
 * (503 busy when none is free), then stored with a raised credential generation and the breached
 * mark cleared, in one statement. `refusal: null`: the target is gone (a spent link, a deleted
 * account). The caller then tidies up (sessions, devices, links) as its flow needs.
 */
export async function replacePassword(gate: Gatehouse, password: string, target: PasswordTarget): Promise<Replaced> {
  const passwordHash = await gate.hashBudget.run(
    () => gate.hasher.hash(password),
    () => null,
  );
  if (!passwordHash) return { ok: false, refusal: busy() };
  const stored =
    "resetLinkId" in target
      ? await gate.emailTokens.resetPassword(target.resetLinkId, passwordHash, gate.clock())
      : await storeNewPassword(gate.prisma, target.userId, passwordHash);
  return stored ? { ok: true, ...stored } : { ok: false, refusal: null };
}

import { busy } from "@/lib/http/refusals";
import type { PasswordProblem } from "@/lib/password/password-rules";
import { hasOtherFactor, storeNewPassword } from "@/lib/users/accounts";
import { newPasswordRules } from "./credentials";
import type { RouteLimits } from "@/lib/auth/limited";
import { browserLabel } from "@/lib/sessions/browser-label";
import { truncateAddress } from "@/lib/events/security-events";
import { endOtherSessions, openSession } from "./browser-session";
import { backToAccount } from "./account-form";
import { setDeviceCookie } from "@/lib/http/cookies";
import type { Gatehouse } from "@/lib/app";
import { noticeOrigin } from "./complete-sign-in";

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

/**
 * Why the password is replaced, which decides what else goes with the old one:
 * - `change`: the signed-in owner, from the account page; `sessionId` is the renewed session the
 *   route opens next, which the event names; `checkedGeneration` the credential generation the
 *   current password was checked under (the change is stored only while it holds).
 * - `reset`: an emailed reset link (spent in the same statement as the hash). The mailbox proved
 *   the owner, so the attack on the old password is over (its lock and "under attack" go), every
 *   other emailed link dies, and `removePasskeys` takes every passkey too.
 */
export type Replacement =
  | {
      kind: "change";
      userId: string;
      sessionId: string;
      checkedGeneration: number;
      /** "Set a password" (decision 39): stored only while the account has none, so two parallel forms set one. */
      whileNone?: boolean;
    }
  | { kind: "reset"; resetLinkId: string; removePasskeys: boolean };

/** The event on the account page and in the log, and the mail to the owner. */
const SAID = {
  change: { event: "password_changed", notice: "password_changed" },
  reset: { event: "password_reset", notice: "password_was_reset" },
} as const;

export type Replaced =
  | { ok: true; userId: string; email: string; credentialGeneration: number; device: { token: string; expiresAtMs: number }; nowMs: number }
  | { ok: false; refusal: Response | null };

/**
 * The one way a password is replaced (the change form, a reset link). Hashed in a hash-budget slot
 * (503 busy when none is free), then stored with a raised credential generation and the breached
 * mark cleared, in one statement: from its commit, every session and refresh family made under
 * the old password is dead, and what follows only tidies up. Every session ends (the change
 * renews its own after), every known device is forgotten and this browser becomes the one known
 * device, the event is recorded, the owner is mailed. `refusal: null`: the target is gone (a spent
 * link, a deleted account).
 */
export async function replacePassword(limits: RouteLimits, password: string, how: Replacement): Promise<Replaced> {
  const { gate, client } = limits;
  const passwordHash = await gate.hashBudget.run(
    () => gate.hasher.hash(password),
    () => null,
  );
  if (!passwordHash) return { ok: false, refusal: busy() };
  const stored =
    how.kind === "reset"
      ? await gate.emailTokens.resetPassword(how.resetLinkId, passwordHash, gate.clock())
      : await storeNewPassword(gate.prisma, { id: how.userId, credentialGeneration: how.checkedGeneration }, passwordHash, how.whileNone);
  if (!stored) return { ok: false, refusal: null };
  const { userId, email } = stored;
  const nowMs = gate.clock();
  const browser = browserLabel(limits.userAgent);

  const ended = await endOtherSessions(gate, userId, null, nowMs);
  let reset = {};
  let credentialGeneration = stored.credentialGeneration;
  if (how.kind === "reset") {
    const passkeysRemoved = how.removePasskeys ? await gate.passkeys.removeAll(userId) : 0;
    // A passkey sign-in that found its key between the new hash and its removal holds to the
    // generation the hash raised: raised once more, its session is dead too (its device goes below).
    if (passkeysRemoved > 0) credentialGeneration = (await gate.sessions.raiseGeneration(userId, null)) ?? credentialGeneration;
    if (passkeysRemoved > 0) await gate.events.accountChanged(userId, "passkeys_removed_by_reset", client, { browser });
    reset = { linksRevoked: await gate.emailTokens.revokeAll(userId), passkeysRemoved };
  }
  const usernameKey = gate.usernameKey(email);
  const devicesForgotten = await gate.devices.forgetAll(usernameKey);
  // The old password is dead, so the attack on it is over: the streak, the lock and "under attack" go.
  if (how.kind === "reset") await gate.lockouts.forget(usernameKey, nowMs);
  // A change keeps the strangers' streak (the current password proved no mailbox), but not the
  // fingerprints of wrong passwords: what was wrong may be right now, and the old one is what a
  // phone will keep sending, to be counted once under the new one.
  else await gate.lockouts.forgetWrongPasswords(usernameKey);
  const device = await gate.devices.issue(usernameKey, nowMs, undefined, { label: browser, address: truncateAddress(client.address) });

  const said = SAID[how.kind];
  await gate.events.accountChanged(userId, said.event, client, how.kind === "change" ? { browser, sessionId: how.sessionId } : { browser });
  void gate.recovery.notice(said.notice, { id: userId }, noticeOrigin(gate, { client, userAgent: limits.userAgent }));
  gate.log.info({ event: said.event, userId, ...ended, devicesForgotten, ...reset });
  return { ok: true, ...stored, credentialGeneration, device, nowMs };
}

/**
 * The account page's answer once its own password form replaced the password: this browser's
 * session, which ended with the others, renewed under `sessionId` (as fresh as the one it replaces,
 * ending when it would have), its new device cookie, and back to the account page with `notice`.
 */
export async function renewedAfterPassword(
  limits: RouteLimits,
  user: { id: string; email: string },
  sessionId: string,
  renewal: Parameters<typeof openSession>[5],
  replaced: Extract<Replaced, { ok: true }>,
  notice: "password_changed" | "password_set",
): Promise<Response> {
  const { gate, client } = limits;
  const sessionCookie = await openSession(
    gate,
    { id: user.id, email: user.email, credentialGeneration: replaced.credentialGeneration },
    client,
    limits.userAgent,
    sessionId,
    renewal,
  );
  const response = backToAccount(notice);
  response.headers.append("Set-Cookie", sessionCookie);
  return setDeviceCookie(response, gate.config, replaced.device.token, replaced.device.expiresAtMs, replaced.nowMs);
}

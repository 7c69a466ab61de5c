import { z } from "zod";
import type { RouteLimits } from "@/lib/auth/limited";
import { linkSchema, invalidLink, readLinkRequest } from "@/lib/auth/link-requests";
import { endOtherSessions } from "@/lib/auth/browser-session";
import { endRememberedBrowsers } from "@/lib/auth/remembered-browsers";
import { noticeOrigin } from "@/lib/auth/complete-sign-in";
import { passkeyRefused, signInPasskeyHolder } from "@/lib/auth/passkey-sign-in";
import type { SignInOutcome } from "@/lib/auth/sign-in-outcome";
import { jsonError } from "@/lib/http/responses";
import type { LiveEmailToken } from "@/lib/recovery/email-tokens";
import { parseRegistration, verifyRegistration } from "@/lib/passkeys/webauthn";
import { browserLabel } from "@/lib/sessions/browser-label";
import { spendPasskeyLink } from "@/lib/users/passkey-accounts";

const AUTHENTICATOR_ON =
  "This account uses an authenticator app, so an emailed link cannot give it a new passkey. Sign in with another passkey, or ask the operator.";

/** What a `new_passkey` link's registration challenge is bound to: that link, never a session. */
export function newPasskeyCeremony(token: Pick<LiveEmailToken, "id">): string {
  return `new_passkey:${token.id}`;
}

const answerSchema = linkSchema({ credential: z.unknown(), callbackUrl: z.string().max(2048).optional() });

/**
 * An emailed `new_passkey` link's answer, top to bottom (decision 39), past the wrapper's same-origin
 * check (it signs a browser in): → the live link → the authenticator's answer to the link's own challenge (our origin
 * and RP ID, user verification) → the link spent and the passkey stored in one transaction (the
 * address confirmed with them) → the session. The mailbox is the proof: the link is single-use,
 * expiring, and dead once the account has a password. A session this browser held for another
 * account changes nothing here: the passkey goes to the link's account.
 */
export async function makePasskeyFromLink(
  request: Request,
  limits: RouteLimits,
  deviceToken: string | undefined,
): Promise<{ ok: false; refusal: Response } | (Extract<SignInOutcome, { ok: true }> & { callbackUrl: string | undefined })> {
  const { gate, client } = limits;
  const link = await readLinkRequest(request, gate, "new_passkey", answerSchema);
  if (!link.ok) return { ok: false, refusal: link.response };
  const { token, fields } = link;
  // The mailbox does not stand in for an authenticator app the owner turned on: recovering such an
  // account takes one of its passkeys or the operator (decision 39).
  if ((await gate.factors.summary(token.userId)).totp) return { ok: false, refusal: jsonError(403, "factor_required", AUTHENTICATOR_ON) };
  const response = parseRegistration(fields.credential);
  if (!response) return { ok: false, refusal: passkeyRefused("malformed") };
  const nowMs = gate.clock();
  const verified = await verifyRegistration(gate.passkeySettings, response, newPasskeyCeremony(token), nowMs);
  if (!verified.ok) return { ok: false, refusal: passkeyRefused(verified.reason) };

  const name = browserLabel(limits.userAgent);
  const spent = await spendPasskeyLink(gate.prisma, token, { ...verified.passkey, name }, nowMs);
  // The authenticator was told to exclude the account's own keys; another account's is refused.
  if (!spent.ok) return { ok: false, refusal: spent.reason === "taken" ? passkeyRefused("invalid_response") : invalidLink() };
  const { user } = spent;
  await gate.events.accountChanged(user.id, "passkey_added", client, { browser: name });
  // A recovery (the address was confirmed before) is news to the owner, and signs out everywhere,
  // as a reset that removes passkeys does: the other passkeys went with the link (the credential
  // generation raised with them), so whoever had the lost key is out and stays out. A start has none.
  if (!spent.confirmed) {
    await endOtherSessions(gate, user.id, null, nowMs);
    await endRememberedBrowsers(gate, user.id);
    // As after a reset: no browser keeps the owner's lane (the lost key's included), and the attack
    // on the account is over. This browser becomes a known device again as it signs in below.
    const usernameKey = gate.usernameKey(user.email);
    await gate.devices.forgetAll(usernameKey);
    await gate.lockouts.forget(usernameKey, nowMs);
    if (spent.passkeysRemoved > 0) await gate.events.accountChanged(user.id, "passkeys_removed_by_recovery", client, { browser: name });
    void gate.recovery.notice("passkey_added", { id: user.id }, noticeOrigin(gate, limits), name);
  }
  gate.log.info({
    event: spent.confirmed ? "passkey_account_confirmed" : "passkey_recovered",
    userId: user.id,
    ...(spent.confirmed ? {} : { passkeysRemoved: spent.passkeysRemoved }),
  });

  const finished = await signInPasskeyHolder(limits, { ...user, passwordBreached: false }, deviceToken);
  if (!finished.ok) return { ok: false, refusal: finished.refusal ?? invalidLink() };
  return { ...finished, callbackUrl: fields.callbackUrl };
}

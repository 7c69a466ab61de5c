import { z } from "zod";
import { newPasswordField } from "@/lib/auth/credentials";
import { newPasswordProblem, replacePassword } from "@/lib/auth/new-password";
import { endOtherSessions } from "@/lib/auth/end-sessions";
import { noticeOrigin } from "@/lib/auth/sign-in";
import { setDeviceCookie } from "@/lib/http/device-cookie";
import { limited } from "@/lib/http/limited";
import { json, jsonError } from "@/lib/http/responses";
import { invalidLink, linkSchema, readLinkRequest } from "@/lib/recovery/link-requests";
import { browserLabel } from "@/lib/sessions/browser-label";

export const dynamic = "force-dynamic";

const resetSchema = linkSchema({
  password: newPasswordField,
  // A passkey signs in without the password: someone who added one is not shut out by a reset.
  // The owner who did not add them all says so here, and every passkey goes with the password.
  removePasskeys: z.boolean().optional(),
});

/**
 * A new password from an emailed reset link. The link is checked before any hashing; the new
 * password must pass the registration rules; then, in one statement, the link is used and the
 * hash replaced (only if neither happened meanwhile), which also raises the credential
 * generation: every browser session and refresh family of the account is dead from that commit.
 * Then the tidy-up: sessions, refresh families and download tokens revoked, every device cookie
 * forgotten and every other emailed link deleted, strangers' lock cleared, and this browser made
 * a known device (the owner proved the mailbox; an attacker's lock must not keep them out).
 */
export const POST = limited("/api/password/reset", async (request, limits) => {
  const { gate, client } = limits;
  const link = await readLinkRequest(request, gate, "reset_password", resetSchema);
  if (!link.ok) return link.response;
  const { password } = link.fields;
  // A reset that removes every passkey leaves the password alone: the full length applies.
  const problem = await newPasswordProblem(gate, password, {
    userId: link.token.userId,
    email: link.token.email,
    removesOtherFactors: link.fields.removePasskeys === true,
  });
  if (problem) return jsonError(400, "invalid_input", problem.message, { fields: { password: problem.message } });

  const reset = await replacePassword(gate, password, { resetLinkId: link.token.id });
  if (!reset.ok) return reset.refusal ?? invalidLink();
  const nowMs = gate.clock();

  const ended = await endOtherSessions(gate, reset.userId, null, nowMs);
  const passkeysRemoved = link.fields.removePasskeys ? await gate.passkeys.removeAll(reset.userId) : 0;
  if (passkeysRemoved > 0) {
    await gate.events.accountChanged(reset.userId, "passkeys_removed_by_reset", client, { browser: browserLabel(limits.userAgent) });
  }
  const links = await gate.emailTokens.revokeAll(reset.userId);
  const usernameKey = gate.usernameKey(reset.email);
  const devices = await gate.devices.forgetAll(usernameKey);
  // The old password is dead, so the attack on it is over: the streak, the lock and "under attack" go.
  await gate.lockouts.forget(usernameKey);
  const device = await gate.devices.issue(usernameKey, nowMs);
  await gate.events.accountChanged(reset.userId, "password_reset", client, { browser: browserLabel(limits.userAgent) });
  gate.recovery.notice("password_was_reset", { id: reset.userId }, noticeOrigin(gate, { client, userAgent: limits.userAgent }));
  gate.log.info({
    event: "password_reset",
    userId: reset.userId,
    ...ended,
    devicesForgotten: devices,
    linksRevoked: links,
    passkeysRemoved,
  });
  const response = json(200, {
    status: "password_reset",
    message: "Your password is changed and every session is signed out. Sign in with the new password.",
    email: reset.email,
  });
  return setDeviceCookie(response, gate.config, device.token, device.expiresAtMs, nowMs);
});

import { z } from "zod";
import { newPasswordField } from "@/lib/auth/credentials";
import { newPasswordProblem, replacePassword } from "@/lib/auth/new-password";
import { setDeviceCookie } from "@/lib/http/cookies";
import { limited } from "@/lib/auth/limited";
import { json, jsonError } from "@/lib/http/responses";
import { invalidLink, linkSchema, readLinkRequest } from "@/lib/auth/link-requests";

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
  const { gate } = limits;
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

  const reset = await replacePassword(limits, password, {
    kind: "reset",
    resetLinkId: link.token.id,
    removePasskeys: link.fields.removePasskeys === true,
  });
  if (!reset.ok) return reset.refusal ?? invalidLink();
  const response = json(200, {
    status: "password_reset",
    message: "Your password is changed and every session is signed out. Sign in with the new password.",
    email: reset.email,
  });
  return setDeviceCookie(response, gate.config, reset.device.token, reset.device.expiresAtMs, reset.nowMs);
});

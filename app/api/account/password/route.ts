import { z } from "zod";
import { readAccountForm } from "@/lib/auth/account-form";
import { fieldErrors, newPasswordField, typedPasswordField } from "@/lib/auth/credentials";
import { newPasswordProblem, renewedAfterPassword, replacePassword } from "@/lib/auth/new-password";
import { freshAuthenticationRefusal } from "@/lib/auth/fresh-authentication";
import { signInWithPassword } from "@/lib/auth/sign-in";
import { deviceTokenOf } from "@/lib/http/cookies";
import { limited } from "@/lib/auth/limited";
import { json, jsonError } from "@/lib/http/responses";
import { SESSION_ENDED } from "@/lib/ui/messages";

export const dynamic = "force-dynamic";

const changeSchema = z.object({
  currentPassword: typedPasswordField("Enter your current password."),
  newPassword: newPasswordField,
  altcha: z.string().max(8_192).optional(),
});

/**
 * Change password, from the account page. The current password goes through the whole sign-in
 * pipeline for the signed-in account (per-address and per-username limits, ALTCHA, lockout, hash
 * budget, Argon2id): a stolen session cookie is no faster a way to guess it than the sign-in
 * page. The new one must pass the password rules. Then every other browser session, every API
 * session (refresh family) and every known-device cookie of the account are revoked; this browser
 * stays signed in, under a new session and a new device cookie.
 */
export const POST = limited("/api/account/password", async (request, limits) => {
  const { gate } = limits;
  const form = await readAccountForm(request, gate, undefined, { replacesPassword: true });
  if (!form.ok) return form.response;
  const userId = form.session.userId;
  const user = await gate.prisma.user.findUnique({ where: { id: userId }, select: { email: true } });
  if (!user) return jsonError(401, "unauthenticated", SESSION_ENDED);
  const input = changeSchema.safeParse(form.fields);
  if (!input.success) return jsonError(400, "invalid_input", "Check the form and try again.", { fields: fieldErrors(input.error) });
  const { currentPassword, newPassword, altcha } = input.data;
  const problem = await newPasswordProblem(gate, newPassword, { userId, email: user.email, currentPassword });
  if (problem) return jsonError(400, "invalid_input", problem.message, { fields: { newPassword: problem.message } });
  // On an account with a second factor the password alone is not the owner: a thief holding a
  // session cookie and the password must not set one the owner does not know (issue 59). The
  // session's own sign-in (which passed the factor) or a confirmation with it in the last 10 minutes.
  if ((await gate.factors.summary(userId)).due) {
    const stale = await freshAuthenticationRefusal(gate, form.session, "json");
    if (stale) return stale;
  }

  const checked = await signInWithPassword(
    limits,
    { email: user.email, password: currentPassword, deviceToken: deviceTokenOf(request, gate.config) },
    { altcha, intent: { kind: "change_password", sessionId: form.session.sid } },
  );
  if (checked.ok === false)
    return checked.refusal ?? json(401, { error: "invalid_credentials", message: "Your current password is not right." });
  // A change inside a session that passed its second step asks for none (lib/auth/sign-in.ts), so this cannot happen.
  if (checked.ok === "second_step") return jsonError(401, "unauthenticated", "Sign in again.");
  if (checked.user.id !== userId) return jsonError(401, "unauthenticated", "Sign in again.");

  // The renewed session is as fresh as the one it replaces, not fresher: the current password alone
  // (no second step) must not become the fresh authentication that adding or removing a factor
  // needs; and it ends when the old one would have, however often the password is changed.
  const renewal = await gate.sessions.renewable(userId, form.session.sid);
  if (!renewal) return jsonError(401, "unauthenticated", SESSION_ENDED);
  // The new session takes the id the password check chose, which the "signed in" event already names.
  const sessionId = checked.sessionId;
  const replaced = await replacePassword(limits, newPassword, {
    kind: "change",
    userId,
    sessionId,
    checkedGeneration: checked.user.credentialGeneration,
  });
  if (!replaced.ok) return replaced.refusal ?? jsonError(401, "unauthenticated", SESSION_ENDED);
  // This browser's session ended with the others: it is renewed under the new id.
  return renewedAfterPassword(limits, { id: userId, email: user.email }, sessionId, renewal, replaced, "password_changed");
});

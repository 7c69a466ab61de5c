import { z } from "zod";
import { readAccountForm } from "@/lib/auth/account-form";
import { fieldErrors, newPasswordField } from "@/lib/auth/credentials";
import { newPasswordProblem, renewedAfterPassword, replacePassword } from "@/lib/auth/new-password";
import { freshAuthenticationRefusal } from "@/lib/auth/fresh-authentication";
import { limited } from "@/lib/auth/limited";
import { jsonError } from "@/lib/http/responses";
import { newSessionId } from "@/lib/sessions/browser-sessions";
import { SESSION_ENDED } from "@/lib/ui/messages";

export const dynamic = "force-dynamic";

const setSchema = z.object({ newPassword: newPasswordField });

/** The answer when the account has a password already: the change form, which asks for it, applies. */
const HAS_PASSWORD = "This account has a password: change it with your current one.";

/**
 * "Set a password", for an account started with a passkey (decision 39): there is no current
 * password to check, so the proof is a fresh authentication (its passkey, in the last 10 minutes).
 * Then the new password's rules (length for an account with another factor, blocklist, breach
 * corpus), Argon2id in a hash-budget slot, and what every password change does: stored only while
 * the account has none and its generation holds, every other session and known device ended, this
 * browser renewed.
 */
export const POST = limited("/api/account/password/set", async (request, limits) => {
  const { gate } = limits;
  const form = await readAccountForm(request, gate, (session) => limits.limit("session", session.sid));
  if (!form.ok) return form.response;
  const { userId } = form.session;
  const stale = await freshAuthenticationRefusal(gate, form.session, "json");
  if (stale) return stale;
  const user = await gate.prisma.user.findUnique({
    where: { id: userId },
    select: { email: true, credentialGeneration: true, passwordHash: true },
  });
  if (!user) return jsonError(401, "unauthenticated", SESSION_ENDED);
  if (user.passwordHash !== null) return jsonError(409, "password_exists", HAS_PASSWORD);
  const input = setSchema.safeParse(form.fields);
  if (!input.success) return jsonError(400, "invalid_input", "Check the form and try again.", { fields: fieldErrors(input.error) });
  const { newPassword } = input.data;
  const problem = await newPasswordProblem(gate, newPassword, { userId, email: user.email });
  if (problem) return jsonError(400, "invalid_input", problem.message, { fields: { newPassword: problem.message } });

  const renewal = await gate.sessions.renewable(userId, form.session.sid);
  if (!renewal) return jsonError(401, "unauthenticated", SESSION_ENDED);
  const sessionId = newSessionId();
  const replaced = await replacePassword(limits, newPassword, {
    kind: "change",
    userId,
    sessionId,
    checkedGeneration: user.credentialGeneration,
    whileNone: true,
  });
  if (!replaced.ok) return replaced.refusal ?? jsonError(409, "password_exists", HAS_PASSWORD);
  return renewedAfterPassword(limits, { id: userId, email: user.email }, sessionId, renewal, replaced, "password_set");
});

import { z } from "zod";
import { backToAccount, readAccountForm } from "@/lib/auth/account-form";
import { fieldErrors, typedPasswordField } from "@/lib/auth/credentials";
import { signInWithPassword } from "@/lib/auth/sign-in";
import { secondStepRequired } from "@/lib/auth/second-step";
import { deviceTokenOf, setDeviceCookie } from "@/lib/http/cookies";
import { limited } from "@/lib/auth/limited";
import { json, jsonError } from "@/lib/http/responses";
import { SESSION_ENDED } from "@/lib/ui/messages";

export const dynamic = "force-dynamic";

const schema = z.object({
  password: typedPasswordField("Enter your password."),
  altcha: z.string().max(8_192).optional(),
  json: z.literal("true").optional(),
});

/**
 * "Confirm it's you" with the password: the signed-in account's password through the whole
 * sign-in corridor (limits, ALTCHA, lockout, hash budget, Argon2id), so a stolen session cookie
 * is no faster a way to guess it. A success marks this browser session freshly authenticated for
 * the next 10 minutes. `json=true` for a script; else back to the account page.
 */
export const POST = limited("/api/account/reauthenticate", async (request, limits) => {
  const { gate } = limits;
  const form = await readAccountForm(request, gate);
  if (!form.ok) return form.response;
  const { userId, sid } = form.session;
  const user = await gate.prisma.user.findUnique({ where: { id: userId }, select: { email: true } });
  if (!user) return jsonError(401, "unauthenticated", SESSION_ENDED);
  const input = schema.safeParse(form.fields);
  if (!input.success) return jsonError(400, "invalid_input", "Enter your password.", { fields: fieldErrors(input.error) });

  const checked = await signInWithPassword(
    limits,
    { email: user.email, password: input.data.password, deviceToken: deviceTokenOf(request, gate.config) },
    { altcha: input.data.altcha, intent: { kind: "reauthenticate", sessionId: sid } },
  );
  if (checked.ok === false) return checked.refusal ?? json(401, { error: "invalid_credentials", message: "That is not your password." });
  // An account with a second step asks for it here too: the page then sends the code to /api/auth/second-step.
  if (checked.ok === "second_step") return secondStepRequired(gate, checked.pending, "browser");
  if (checked.user.id !== userId || !(await gate.sessions.reauthenticated(userId, sid, gate.clock()))) {
    return jsonError(401, "unauthenticated", SESSION_ENDED);
  }
  const response = input.data.json ? json(200, { status: "reauthenticated" }) : backToAccount("reauthenticated");
  // The check replaced this browser's known-device token, as every successful password check does.
  return setDeviceCookie(response, gate.config, checked.device.token, checked.device.expiresAtMs, gate.clock());
});

import { z } from "zod";
import { readAccountForm } from "@/lib/auth/account-form";
import { factorTurnedOn } from "@/lib/auth/factor-changes";
import { limited } from "@/lib/auth/limited";
import { json, jsonError } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

const schema = z.object({
  code: z
    .string()
    .trim()
    .regex(/^\d{6}$/, "Enter the 6 digits your authenticator app shows."),
});

/**
 * The first code of an app being set up turns it on (and spends that code). No fresh
 * authentication here: the setup that made the secret asked for one, and only the session that
 * started it can confirm it, within 10 minutes; a wrong code changes nothing. Answers the recovery codes, once, when the account had none.
 */
export const POST = limited("/api/account/totp/confirm", async (request, limits) => {
  const { gate } = limits;
  const form = await readAccountForm(request, gate, (session) => limits.limit("session", session.sid));
  if (!form.ok) return form.response;
  const input = schema.safeParse(form.fields);
  if (!input.success)
    return jsonError(400, "invalid_input", input.error.issues[0]!.message, { fields: { code: input.error.issues[0]!.message } });
  if (!(await gate.factors.confirmTotp(form.session.userId, form.session.sid, input.data.code, gate.clock()))) {
    return jsonError(400, "invalid_code", "That code is not right. Check the time on your phone, and enter the newest code.");
  }
  const recoveryCodes = await factorTurnedOn(limits, form.session, "totp");
  return json(200, { status: "totp_added", recoveryCodes });
});

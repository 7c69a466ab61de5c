import { readFreshAccountForm } from "@/lib/auth/fresh-authentication";
import { factorTurnedOff, factorTurnedOn } from "@/lib/auth/factor-changes";
import { limited } from "@/lib/auth/limited";
import { json, jsonError } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

/**
 * "Ask for a passkey after my password" on or off (`on=true|false`): a fresh authentication
 * first; on needs a passkey on the account. Recorded and mailed; the first second step answers
 * the recovery codes, once.
 */
export const POST = limited("/api/account/passkeys/second-factor", async (request, limits) => {
  const { gate } = limits;
  const form = await readFreshAccountForm(request, limits);
  if (!form.ok) return form.response;
  const on = form.fields.on;
  if (on !== "true" && on !== "false") return jsonError(400, "invalid_input", "Say on=true or on=false.");
  const { userId } = form.session;
  const before = await gate.factors.summary(userId);
  if (on === "true" && before.passkeys === 0) return jsonError(409, "invalid_input", "Add a passkey first.");
  await gate.factors.setPasskeyAfterPassword(userId, on === "true");
  if (on === "true" && !before.passkeyAfterPassword) {
    return json(200, { status: "passkey_second_factor_on", recoveryCodes: await factorTurnedOn(limits, form.session, "passkey") });
  }
  if (on === "false" && before.passkeyAfterPassword) await factorTurnedOff(limits, form.session, "passkey");
  return json(200, { status: on === "true" ? "passkey_second_factor_on" : "passkey_second_factor_off", recoveryCodes: null });
});

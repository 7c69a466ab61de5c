import { readFreshAccountForm } from "@/lib/auth/fresh-authentication";
import { factorTurnedOff } from "@/lib/auth/factor-changes";
import { limited } from "@/lib/auth/limited";
import { json, jsonError } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

/** Removes the authenticator app (or a setup not finished): a fresh authentication first; recorded and mailed. */
export const POST = limited("/api/account/totp/remove", async (request, limits) => {
  const { gate } = limits;
  const form = await readFreshAccountForm(request, limits);
  if (!form.ok) return form.response;
  const wasOn = (await gate.factors.summary(form.session.userId)).totp;
  if (!(await gate.factors.removeTotp(form.session.userId)))
    return jsonError(404, "not_found", "There is no authenticator app on your account.");
  if (wasOn) await factorTurnedOff(limits, form.session, "totp");
  return json(200, { status: "totp_removed" });
});

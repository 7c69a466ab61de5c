import { readFreshAccountForm } from "@/lib/auth/fresh-authentication";
import { noticeOrigin } from "@/lib/auth/complete-sign-in";
import { limited } from "@/lib/auth/limited";
import { endRememberedBrowsers } from "@/lib/auth/remembered-browsers";
import { json, jsonError } from "@/lib/http/responses";
import { browserLabel } from "@/lib/sessions/browser-label";

export const dynamic = "force-dynamic";

/** "Get new codes": ten new recovery codes replace every old one; a fresh authentication first; shown once, recorded and mailed. */
export const POST = limited("/api/account/recovery-codes", async (request, limits) => {
  const { gate, client } = limits;
  const form = await readFreshAccountForm(request, limits);
  if (!form.ok) return form.response;
  const { userId, sid } = form.session;
  if (!(await gate.factors.summary(userId)).due)
    return jsonError(409, "invalid_input", "Turn on a second step first: recovery codes stand in for it.");
  const recoveryCodes = await gate.factors.replaceRecoveryCodes(userId, gate.clock());
  // A factor change: every remembered browser is asked its second step again.
  await endRememberedBrowsers(gate, userId);
  await gate.events.accountChanged(userId, "recovery_codes_replaced", client, { browser: browserLabel(limits.userAgent), sessionId: sid });
  void gate.recovery.notice("recovery_codes_replaced", { id: userId }, noticeOrigin(gate, limits));
  return json(200, { status: "recovery_codes_replaced", recoveryCodes });
});

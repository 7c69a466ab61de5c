import { readAccountForm } from "@/lib/auth/account-form";
import { browserLabel } from "@/lib/sessions/browser-label";
import { limited } from "@/lib/auth/limited";
import { json, jsonError } from "@/lib/http/responses";
import { SESSION_ENDED } from "@/lib/ui/messages";
import { passkeyRefused, spendAssertion } from "@/lib/auth/passkey-sign-in";
import { credentialField, parseAuthentication } from "@/lib/passkeys/webauthn";

export const dynamic = "force-dynamic";

/**
 * "Confirm it's you" with one of the account's own passkeys, answering this session's
 * re-authentication challenge (the same check as a passkey sign-in, spendAssertion). A success marks
 * the session freshly authenticated.
 */
export const POST = limited("/api/account/reauthenticate/passkey", async (request, limits) => {
  const { gate } = limits;
  const form = await readAccountForm(request, gate, (session) => limits.limit("session", session.sid));
  if (!form.ok) return form.response;
  const { userId, sid } = form.session;
  const response = credentialField(form.fields.credential, parseAuthentication);
  if (!response) return passkeyRefused("malformed");
  const used = await spendAssertion(limits, response, { purpose: "reauthenticate", boundTo: sid, owner: userId });
  if (!used.ok) return passkeyRefused(used.reason);
  const nowMs = gate.clock();
  if (!(await gate.sessions.reauthenticated(userId, sid, nowMs))) return jsonError(401, "unauthenticated", SESSION_ENDED);
  await gate.events.accountChanged(userId, "reauthenticated", limits.client, { browser: browserLabel(limits.userAgent), sessionId: sid });
  return json(200, { status: "reauthenticated" });
});

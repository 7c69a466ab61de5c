import { readAccountForm } from "@/lib/auth/account-form";
import { freshAuthenticationRefusal } from "@/lib/auth/fresh-authentication";
import { noticeOrigin } from "@/lib/auth/complete-sign-in";
import { limited } from "@/lib/auth/limited";
import { json } from "@/lib/http/responses";
import { passkeyRefused } from "@/lib/auth/passkey-sign-in";
import { credentialField, parseRegistration, verifyRegistration } from "@/lib/passkeys/webauthn";
import { browserLabel } from "@/lib/sessions/browser-label";

export const dynamic = "force-dynamic";

/**
 * Adds a passkey to the signed-in account: a fresh authentication, then the authenticator's
 * answer to this session's registration challenge (our origin, our RP ID, user verification).
 * Recorded as an event and mailed to the owner. Its first name is the browser it was made on.
 */
export const POST = limited("/api/account/passkeys", async (request, limits) => {
  const { gate, client } = limits;
  const form = await readAccountForm(request, gate, (session) => limits.limit("session", session.sid));
  if (!form.ok) return form.response;
  const { userId, sid } = form.session;
  const stale = await freshAuthenticationRefusal(gate, form.session, "json");
  if (stale) return stale;
  const response = credentialField(form.fields.credential, parseRegistration);
  if (!response) return passkeyRefused("malformed");
  const nowMs = gate.clock();
  const verified = await verifyRegistration(gate.passkeySettings, response, sid, nowMs);
  if (!verified.ok) return passkeyRefused(verified.reason);
  const name = browserLabel(limits.userAgent);
  const added = await gate.passkeys.add({ ...verified.passkey, userId, name, nowMs });
  // A credential id that exists already (this or another account): the authenticator was told to exclude it.
  if ("taken" in added) return passkeyRefused("invalid_response");
  await gate.events.accountChanged(userId, "passkey_added", client, { browser: browserLabel(limits.userAgent), sessionId: sid });
  void gate.recovery.notice("passkey_added", { id: userId }, noticeOrigin(gate, limits), name);
  gate.log.info({ event: "passkey_added", userId, synced: verified.passkey.deviceType === "multiDevice" });
  return json(200, { status: "passkey_added", passkey: { id: added.id, name } });
});

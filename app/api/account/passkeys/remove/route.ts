import { backToAccount, readAccountForm } from "@/lib/auth/account-form";
import { freshAuthenticationRefusal } from "@/lib/auth/fresh-authentication";
import { noticeOrigin } from "@/lib/auth/complete-sign-in";
import { factorTurnedOff } from "@/lib/auth/factor-changes";
import { limited } from "@/lib/auth/limited";
import { json, jsonError } from "@/lib/http/responses";
import { browserLabel } from "@/lib/sessions/browser-label";

export const dynamic = "force-dynamic";

/** Removes one of the account's passkeys: a fresh authentication first; recorded and mailed. */
export const POST = limited("/api/account/passkeys/remove", async (request, limits) => {
  const { gate, client } = limits;
  const form = await readAccountForm(request, gate, (session) => limits.limit("session", session.sid));
  if (!form.ok) return form.response;
  const { userId, sid } = form.session;
  const answer = form.fields.json === "true" ? "json" : "redirect";
  const stale = await freshAuthenticationRefusal(gate, form.session, answer);
  if (stale) return stale;
  const name = await gate.passkeys.remove(userId, form.fields.id ?? "", { keepLastCredential: true });
  if (name === null) return jsonError(404, "not_found", "That passkey is not on your account.");
  if (name === "last_credential")
    return jsonError(409, "last_credential", "This is your only way to sign in. Set a password or add another passkey first.");
  await gate.events.accountChanged(userId, "passkey_removed", client, { browser: browserLabel(limits.userAgent), sessionId: sid });
  void gate.recovery.notice("passkey_removed", { id: userId }, noticeOrigin(gate, limits), name);
  gate.log.info({ event: "passkey_removed", userId });
  // The owner removed their last passkey themselves: it can no longer be their second step.
  const factors = await gate.factors.summary(userId);
  if (factors.passkeyAfterPassword && factors.passkeys === 0) {
    await gate.factors.setPasskeyAfterPassword(userId, false);
    await factorTurnedOff(limits, form.session, "passkey");
  }
  return answer === "json" ? json(200, { status: "passkey_removed" }) : backToAccount("passkey_removed");
});

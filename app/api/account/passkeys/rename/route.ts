import { backToAccount, readAccountForm } from "@/lib/auth/account-form";
import { limited } from "@/lib/auth/limited";
import { json, jsonError } from "@/lib/http/responses";
import { passkeyName } from "@/lib/passkeys/passkey-rules";
import { freshAuthenticationRefusal } from "@/lib/auth/fresh-authentication";
import { browserLabel } from "@/lib/sessions/browser-label";

export const dynamic = "force-dynamic";

/**
 * Renames one of the account's passkeys (a plain form post; `json=true` for a script). A fresh
 * authentication first, and recorded: a relabelled key could make its owner remove the wrong one.
 */
export const POST = limited("/api/account/passkeys/rename", async (request, limits) => {
  const { gate } = limits;
  const form = await readAccountForm(request, gate, (session) => limits.limit("session", session.sid));
  if (!form.ok) return form.response;
  const answer = form.fields.json === "true" ? "json" : "redirect";
  const stale = await freshAuthenticationRefusal(gate, form.session, answer);
  if (stale) return stale;
  const name = passkeyName(form.fields.name ?? "");
  if (!name)
    return jsonError(400, "invalid_input", "Give the passkey a name of 1 to 60 characters.", { fields: { name: "1 to 60 characters." } });
  const renamed = await gate.passkeys.rename(form.session.userId, form.fields.id ?? "", name);
  if (!renamed) return jsonError(404, "not_found", "That passkey is not on your account.");
  await gate.events.accountChanged(form.session.userId, "passkey_renamed", limits.client, {
    browser: browserLabel(limits.userAgent),
    sessionId: form.session.sid,
  });
  return answer === "json" ? json(200, { status: "passkey_renamed", name }) : backToAccount("passkey_renamed");
});

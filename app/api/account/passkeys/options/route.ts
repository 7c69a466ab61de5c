import { readAccountForm } from "@/lib/auth/account-form";
import { freshAuthenticationRefusal } from "@/lib/auth/fresh-authentication";
import { limited } from "@/lib/auth/limited";
import { json, jsonError } from "@/lib/http/responses";
import { authenticationOptions, registrationOptions } from "@/lib/passkeys/webauthn";

export const dynamic = "force-dynamic";

/**
 * The account page's WebAuthn ceremonies: `purpose=register` (add a passkey: needs a fresh
 * authentication) or `purpose=reauthenticate` (prove it's you with one of the account's passkeys).
 * Each challenge is bound to this browser session, so it serves no other.
 */
export const POST = limited("/api/account/passkeys/options", async (request, limits) => {
  const { gate } = limits;
  const form = await readAccountForm(request, gate, (session) => limits.limit("session", session.sid));
  if (!form.ok) return form.response;
  const { userId, sid } = form.session;
  const nowMs = gate.clock();
  const existing = await gate.passkeys.credentialIds(userId);
  if (form.fields.purpose === "reauthenticate") {
    if (existing.length === 0) return jsonError(400, "invalid_input", "This account has no passkey yet.");
    return json(200, { options: await authenticationOptions(gate.passkeySettings, "reauthenticate", sid, nowMs, existing) });
  }
  if (form.fields.purpose !== "register") return jsonError(400, "invalid_input", "Reload the page and try again.");
  const stale = await freshAuthenticationRefusal(gate, form.session, "json");
  if (stale) return stale;
  const user = await gate.prisma.user.findUnique({ where: { id: userId }, select: { id: true, email: true } });
  if (!user) return jsonError(401, "unauthenticated", "Sign in again.");
  return json(200, { options: await registrationOptions(gate.passkeySettings, user, existing, sid, nowMs) });
});

import { readFreshAccountForm } from "@/lib/auth/fresh-authentication";
import { limited } from "@/lib/auth/limited";
import { json, jsonError } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

/**
 * "Set up an authenticator app": after a fresh authentication, a new secret, sealed at rest and
 * not on yet; the account page then shows it (QR code and text) and asks for a first code.
 */
export const POST = limited("/api/account/totp/setup", async (request, limits) => {
  const { gate } = limits;
  const form = await readFreshAccountForm(request, limits);
  if (!form.ok) return form.response;
  if (!(await gate.factors.beginTotp(form.session.userId, form.session.sid, gate.clock()))) {
    return jsonError(409, "invalid_input", "An authenticator app is already on. Remove it first to set up another.");
  }
  return json(200, { status: "totp_setup" });
});

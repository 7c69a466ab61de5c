import { readLinkRequest, linkSchema } from "@/lib/auth/link-requests";
import { limited } from "@/lib/auth/limited";
import { newPasskeyCeremony } from "@/lib/auth/new-passkey";
import { json } from "@/lib/http/responses";
import { registrationOptions } from "@/lib/passkeys/webauthn";

export const dynamic = "force-dynamic";

/**
 * The options of the passkey an emailed `new_passkey` link makes (an account started with a
 * passkey, or one recovering): a registration challenge bound to that link, so it serves no other
 * link and no session. Reading them spends nothing; every bad link is the one invalid-link answer.
 */
export const POST = limited("/api/new-passkey/options", async (request, { gate }) => {
  const link = await readLinkRequest(request, gate, "new_passkey", linkSchema({}));
  if (!link.ok) return link.response;
  const { token } = link;
  const existing = await gate.passkeys.credentialIds(token.userId);
  const user = { id: token.userId, email: token.email };
  return json(200, { options: await registrationOptions(gate.passkeySettings, user, existing, newPasskeyCeremony(token), gate.clock()) });
});

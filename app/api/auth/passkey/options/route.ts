import { limited } from "@/lib/auth/limited";
import { json } from "@/lib/http/responses";
import { authenticationOptions } from "@/lib/passkeys/webauthn";

export const dynamic = "force-dynamic";

/**
 * Options for "Sign in with a passkey" and the email field's passkey autofill: a signed,
 * expiring, single-use challenge and no account named (discoverable credentials), so the answer
 * is the same for everyone and nothing is stored until it is used.
 */
export const POST = limited("/api/auth/passkey/options", async (_request, { gate }) =>
  json(200, { options: await authenticationOptions(gate.passkeySettings, "sign_in", "", gate.clock()) }),
);

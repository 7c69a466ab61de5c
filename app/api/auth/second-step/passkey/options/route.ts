import { pendingRefused } from "@/lib/auth/second-step";
import { pendingSignInOf } from "@/lib/http/cookies";
import { limited } from "@/lib/auth/limited";
import { json } from "@/lib/http/responses";
import { authenticationOptions } from "@/lib/passkeys/webauthn";

export const dynamic = "force-dynamic";

/**
 * "Use your passkey" at the second step: a single-use challenge bound to this browser's pending
 * sign-in, offering the account's own passkeys. Reading the pending sign-in counts no try: the
 * answer (POST /api/auth/second-step/passkey) does.
 */
export const POST = limited("/api/auth/second-step/passkey/options", async (request, { gate }) => {
  await request.body?.cancel();
  const pending = await gate.pendingSignIns.peek(pendingSignInOf(request, gate.config) ?? "", "browser", gate.clock());
  if (!pending) return pendingRefused(gate, "unknown", "browser");
  const allow = await gate.passkeys.credentialIds(pending.userId);
  return json(200, { options: await authenticationOptions(gate.passkeySettings, "second_step", pending.id, gate.clock(), allow) });
});

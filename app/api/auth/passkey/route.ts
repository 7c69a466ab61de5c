import { landingUrl, signedInBrowser } from "@/lib/auth/browser-session";
import { deviceTokenOf } from "@/lib/http/cookies";
import { limited } from "@/lib/auth/limited";
import { passkeyRefused, readPasskeyAnswer, signInWithPasskey } from "@/lib/auth/passkey-sign-in";

export const dynamic = "force-dynamic";

/**
 * Passkey sign-in: the per-address limits (the sign-in's and its own, before the body), a
 * same-origin check (no other site may sign a browser in to an account of its choosing) and one
 * parse of the JSON body, then signInWithPasskey, then the session. 200 `{ url }` (the callback,
 * or /account/new-password while the password is breached) with the session and device cookies;
 * 400 `passkey_invalid` with a reason for anything that is not a fresh, valid assertion.
 */
export const POST = limited("/api/auth/passkey", async (request, limits) => {
  const { gate } = limits;
  const answer = await readPasskeyAnswer(request, gate);
  if (!answer.ok) return answer.response;

  const outcome = await signInWithPasskey(limits, answer.credential, deviceTokenOf(request, gate.config));
  if (!outcome.ok) return outcome.refusal ?? passkeyRefused("invalid_response");
  // The address's budgets count failed passkeys only: an office of owners never spends them.
  await limits.succeeded(outcome.user.id);
  return signedInBrowser(gate, outcome, limits.client, limits.userAgent, { url: landingUrl(gate, outcome, answer.callbackUrl) });
});

import { z } from "zod";
import { landingUrl, signedInBrowser } from "@/lib/auth/browser-session";
import { readJson } from "@/lib/http/body";
import { deviceTokenOf } from "@/lib/http/device-cookie";
import { limited } from "@/lib/http/limited";
import { csrfRefused } from "@/lib/http/refusals";
import { jsonError } from "@/lib/http/responses";
import { appOrigin, isSameOriginRequest } from "@/lib/http/same-origin";
import { passkeyRefused, signInWithPasskey } from "@/lib/passkeys/sign-in";
import { parseAuthentication } from "@/lib/passkeys/webauthn";

export const dynamic = "force-dynamic";

const bodySchema = z.object({ credential: z.unknown(), callbackUrl: z.string().max(2048).optional() });

/**
 * Passkey sign-in: the per-address limits (the sign-in's and its own, before the body), one parse
 * of the JSON body, a same-origin check (no other site may sign a browser in to an account of its
 * choosing), then signInWithPasskey, then the session. 200 `{ url }` (the callback, or
 * /account/new-password while the password is breached) with the session and device cookies; 400 `passkey_invalid` with a reason for anything that is not a fresh, valid assertion.
 */
export const POST = limited("/api/auth/passkey", async (request, limits) => {
  const { gate } = limits;
  if (!isSameOriginRequest(request.headers, appOrigin(gate.config.NEXTAUTH_URL))) return csrfRefused();
  const body = await readJson(request, gate.config.MAX_BODY_BYTES);
  if (!body.ok) return body.response;
  const input = bodySchema.safeParse(body.value);
  if (!input.success) return jsonError(400, "invalid_input", "Try the passkey again.");
  const credential = parseAuthentication(input.data.credential);
  if (!credential) return passkeyRefused("malformed");

  const outcome = await signInWithPasskey(limits, credential, deviceTokenOf(request, gate.config));
  if (!outcome.ok) return outcome.refusal ?? passkeyRefused("invalid_response");
  return signedInBrowser(gate, outcome, limits.client, limits.userAgent, { url: landingUrl(gate, outcome, input.data.callbackUrl) });
});

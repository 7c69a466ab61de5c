import { landingPath, signedInBrowser } from "@/lib/auth/browser-session";
import { limited } from "@/lib/auth/limited";
import { makePasskeyFromLink } from "@/lib/auth/new-passkey";
import { deviceTokenOf } from "@/lib/http/cookies";

export const dynamic = "force-dynamic";

/**
 * The page of an emailed `new_passkey` link: `{ token, credential }` → the passkey made, the address
 * confirmed, and the browser signed in (200 `{ url }` with the session and device cookies); 400
 * `invalid_token` for a stale, used or foreign link, 400 `passkey_invalid` for a bad answer.
 */
export const POST = limited("/api/new-passkey", async (request, limits) => {
  const { gate } = limits;
  const outcome = await makePasskeyFromLink(request, limits, deviceTokenOf(request, gate.config));
  if (!outcome.ok) return outcome.refusal;
  return signedInBrowser(gate, outcome, limits.client, limits.userAgent, {
    status: "passkey_created",
    url: landingPath(outcome, outcome.callbackUrl, "/account"),
  });
});

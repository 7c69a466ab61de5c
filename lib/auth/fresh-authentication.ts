import { jsonError } from "@/lib/http/responses";
import { isFreshAuthentication } from "@/lib/passkeys/rules";
import { backToAccount } from "./account-form";
import type { LiveSession } from "./browser-session";
import type { Gatehouse } from "./gatehouse";

export const CONFIRM_FIRST = "Confirm it's you first: enter your password again, or use a passkey.";

/**
 * ASVS 5.0 7.5.1: what changes how the account is protected (adding or removing a passkey,
 * signing out everywhere else) needs this browser to have proved who it is in the last 10
 * minutes, by its sign-in or by asking again (POST /api/account/reauthenticate). A stolen session
 * cookie alone cannot add the thief's passkey. The refusal: 401 `reauthentication_required` for a
 * script, which then asks and carries on; for a plain form, back to the account page, which asks.
 */
export async function freshAuthenticationRefusal(
  gate: Gatehouse,
  session: LiveSession,
  answer: "json" | "redirect",
): Promise<Response | null> {
  const authenticatedAtMs = await gate.sessions.authenticatedAt(session.userId, session.sid);
  if (authenticatedAtMs !== null && isFreshAuthentication(authenticatedAtMs, gate.clock())) return null;
  return answer === "json" ? jsonError(401, "reauthentication_required", CONFIRM_FIRST) : backToAccount("confirm_first");
}

import { jsonError } from "@/lib/http/responses";
import { isFreshAuthentication } from "@/lib/passkeys/passkey-rules";
import type { NextRequest } from "next/server";
import type { RouteLimits } from "@/lib/auth/limited";
import { refuse, type OrRefused } from "@/lib/http/or-refused";
import { backToAccount, readAccountForm } from "./account-form";
import type { LiveSession } from "./browser-session";
import type { Gatehouse } from "@/lib/app";

export const CONFIRM_FIRST = "Confirm it's you first: enter your password again (and your code, if you use one), or use a passkey.";

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

/**
 * The account form of a change to how the account is protected (a factor, recovery codes): the
 * form's gate (lib/auth/account-form.ts, limited per browser session) and then a fresh
 * authentication, answered as JSON (the account page's scripts ask, then carry on).
 */
export async function readFreshAccountForm(
  request: NextRequest,
  limits: RouteLimits,
): Promise<OrRefused<{ session: LiveSession; fields: Record<string, string> }>> {
  const form = await readAccountForm(request, limits.gate, (session) => limits.limit("session", session.sid));
  if (!form.ok) return form;
  const stale = await freshAuthenticationRefusal(limits.gate, form.session, "json");
  return stale ? refuse(stale) : form;
}

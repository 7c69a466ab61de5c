import type { NextRequest } from "next/server";
import { landingUrl, liveSessionOfCookies, signedInBrowser } from "@/lib/auth/browser-session";
import { cookieJar, clearPendingSignInCookie, setDeviceCookie } from "@/lib/http/cookies";
import type { RouteLimits } from "@/lib/auth/limited";
import { json, jsonError } from "@/lib/http/responses";
import { SESSION_ENDED } from "@/lib/ui/messages";
import type { passSecondStep } from "./second-step";

/** The live session this browser's cookie names, if any (the one a "Confirm it's you" must come from). */
export async function liveSessionIdOf(request: NextRequest, gate: RouteLimits["gate"]): Promise<string | null> {
  return (await liveSessionOfCookies(gate, cookieJar(request.cookies)).catch(() => null))?.sid ?? null;
}

/**
 * A browser's finished second step: a sign-in gets its session; "Confirm it's you" marks the
 * session that asked (and only that one) freshly authenticated. Either way the pending cookie goes.
 * A sign-in lands where every way in lands (landingUrl): a breached password's owner on the new-password page.
 */
export async function finishBrowserSecondStep(
  request: NextRequest,
  limits: RouteLimits,
  finished: Extract<Awaited<ReturnType<typeof passSecondStep>>, { ok: true }>["finished"],
  callbackUrl: string | undefined,
): Promise<Response> {
  const { gate } = limits;
  if (finished.purpose === "reauthenticate") {
    const nowMs = gate.clock();
    if (!(await gate.sessions.reauthenticated(finished.user.id, finished.sessionId, nowMs))) {
      return clearPendingSignInCookie(jsonError(401, "unauthenticated", SESSION_ENDED), gate.config);
    }
    const response = json(200, { status: "reauthenticated" });
    setDeviceCookie(response, gate.config, finished.device.token, finished.device.expiresAtMs, nowMs);
    return clearPendingSignInCookie(response, gate.config);
  }
  // As the password step would have answered: a breached password's next page is choosing a new one.
  const response = await signedInBrowser(gate, finished, limits.client, limits.userAgent, {
    url: landingUrl(gate, finished, callbackUrl),
  });
  return clearPendingSignInCookie(response, gate.config);
}

import { signOutEverywhere, liveSessionOfCookies } from "@/lib/auth/browser-session";
import { addressTaken, readLinkToken } from "@/lib/auth/email-change-links";
import { limited } from "@/lib/auth/limited";
import { invalidLink } from "@/lib/auth/link-requests";
import { sessionCookie } from "@/lib/auth/next-auth/session-cookie";
import { cookieJar, setDeviceCookie } from "@/lib/http/cookies";
import { truncateAddress } from "@/lib/events/security-events";
import { json } from "@/lib/http/responses";
import { browserLabel } from "@/lib/sessions/browser-label";
import { confirmEmailChange } from "@/lib/users/email-change";

export const dynamic = "force-dynamic";

/**
 * The new address's link, confirmed by the button on the page it opens (mail scanners open links):
 * the account moves to the new address (lib/users/email-change.ts), and every session and token
 * ends but the browser session that asked for the change. The credential generation is raised
 * with it, so reset and unlock links mailed to the old address die too. Where this browser is that
 * session, its cookie is issued again with the new address, it becomes the new name's known device,
 * and it goes back to the account page.
 */
export const POST = limited("/api/email-change/confirm", async (request, limits) => {
  const { gate, client } = limits;
  const link = await readLinkToken(request, gate);
  if (!link.ok) return link.response;
  const changed = await confirmEmailChange(gate.prisma, link.token, gate.usernameKey, gate.clock());
  if (!changed.ok) {
    gate.log.info({ event: "email_change_refused", reason: changed.reason });
    return changed.reason === "taken" ? addressTaken() : invalidLink();
  }
  const { userId, to, keepSid } = changed;
  const nowMs = gate.clock();
  const ended = await signOutEverywhere(gate, userId, keepSid, nowMs);
  await gate.events.accountChanged(userId, "email_changed", client, { browser: browserLabel(limits.userAgent) });
  gate.log.info({ event: "email_changed", userId, ...ended });

  const here = await liveSessionOfCookies(gate, cookieJar(request.cookies));
  if (here && here.userId === userId && here.sid === keepSid) {
    // The devices of the old name were forgotten with it (each cookie is signed for its name): this
    // browser, which asked and confirmed, is the new name's first known device.
    const browser = browserLabel(limits.userAgent);
    const device = await gate.devices.issue(gate.usernameKey(to), nowMs, undefined, {
      label: browser,
      address: truncateAddress(client.address),
    });
    const response = json(200, { status: "email_changed", redirectTo: "/account?notice=email_changed" });
    response.headers.append("Set-Cookie", await sessionCookie(gate.config, { sub: userId, email: to, sid: keepSid }, nowMs));
    return setDeviceCookie(response, gate.config, device.token, device.expiresAtMs, nowMs);
  }
  return json(200, { status: "email_changed", email: to });
});

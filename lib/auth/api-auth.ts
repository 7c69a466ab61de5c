import type { NextRequest } from "next/server";
import { cookieJar } from "@/lib/http/cookies";
import { isMediaType } from "@/lib/http/body";
import { passwordChangeRequired, unavailable } from "@/lib/http/refusals";
import { accept, refuse, type OrRefused } from "@/lib/http/or-refused";
import { jsonError } from "@/lib/http/responses";
import { accessTokenStanding, verifyAccessToken } from "@/lib/tokens/access-token";
import { liveSessionOfCookies } from "./browser-session";
import type { Gatehouse } from "@/lib/app";
import { messageOf } from "@/lib/log/message";

export type ApiCaller = { userId: string; via: "bearer"; familyId: string } | { userId: string; via: "session"; sid: string };

/**
 * Who calls the API: a Bearer access token, or else the browser's next-auth session cookie.
 * A Bearer header that does not verify, or whose family or credential generation has ended, is
 * refused outright, never silently downgraded to the session, so a client learns its token is bad.
 */
export async function apiCaller(
  request: NextRequest,
  gate: Gatehouse,
  options: { changesState?: boolean } = {},
): Promise<OrRefused<{ caller: ApiCaller }>> {
  const authorization = request.headers.get("authorization");
  if (authorization !== null) return bearerCaller(gate, authorization);
  return sessionCaller(request, gate, options.changesState === true);
}

/** A Bearer access token: its signature, then its standing (family, credentials, account). */
async function bearerCaller(gate: Gatehouse, authorization: string): Promise<OrRefused<{ caller: ApiCaller }>> {
  const match = /^Bearer ([A-Za-z0-9_\-.]{1,4096})$/.exec(authorization);
  const check = match
    ? await verifyAccessToken(match[1]!, gate.config.tokens.secret, gate.clock())
    : { ok: false as const, reason: "invalid" as const };
  if (!check.ok) {
    const message = check.reason === "expired" ? "The access token has expired. Refresh it." : "The access token is not valid.";
    return refuse(
      jsonError(
        401,
        "invalid_token",
        message,
        {},
        { "WWW-Authenticate": `Bearer error="invalid_token", error_description="${check.reason}"` },
      ),
    );
  }
  // A signature proves who was issued the token, not that nothing has ended it since.
  let ended;
  try {
    ended = await accessTokenStanding(gate.prisma, check);
  } catch (error) {
    gate.log.error({ event: "access_token_check_failed", err: messageOf(error) });
    gate.dataHealth.failed(error);
    return refuse(unavailable());
  }
  if (ended === "password_change_required") return refuse(passwordChangeRequired());
  if (ended) {
    gate.log.info({ event: "access_token_refused", reason: ended, familyId: check.familyId });
    return refuse(
      jsonError(
        401,
        "invalid_token",
        ended === "account_gone"
          ? "The account for this access token no longer exists."
          : "The access token has been revoked. Sign in again.",
        {},
        { "WWW-Authenticate": 'Bearer error="invalid_token", error_description="revoked"' },
      ),
    );
  }
  return accept({ caller: { userId: check.userId, via: "bearer", familyId: check.familyId } });
}

/** The browser's session cookie, only as good as its server record: signed out, revoked, idle or expired is no session. */
async function sessionCaller(request: NextRequest, gate: Gatehouse, changesState: boolean): Promise<OrRefused<{ caller: ApiCaller }>> {
  let session;
  try {
    session = await liveSessionOfCookies(gate, cookieJar(request.cookies));
  } catch (error) {
    gate.log.error({ event: "session_check_failed", err: messageOf(error) });
    gate.dataHealth.failed(error);
    return refuse(unavailable());
  }
  if (session?.passwordChangeRequired) return refuse(passwordChangeRequired());
  if (!session) {
    return refuse(jsonError(401, "unauthenticated", "Sign in or send a Bearer access token.", {}, { "WWW-Authenticate": "Bearer" }));
  }
  // A cookie rides along on any request the browser makes, a Bearer token only on the ones its
  // holder writes: a cookie-authenticated write came from the app's own pages (the route's wrapper
  // refused any other, lib/http/csrf.ts), and is JSON, which no other site can send without a CORS
  // preflight: the session's form token is for forms.
  if (changesState && !isMediaType(request.headers.get("content-type"), "application/json")) {
    return refuse(jsonError(415, "unsupported_media_type", "Send Content-Type: application/json."));
  }
  return accept({ caller: { userId: session.userId, via: "session", sid: session.sid } });
}

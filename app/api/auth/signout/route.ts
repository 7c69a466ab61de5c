import { fieldErrors, signOutSchema } from "@/lib/auth/credentials";
import { clearedSessionCookie, sessionClaimsOfCookies } from "@/lib/auth/next-auth/session-cookie";
import { cookieJar } from "@/lib/http/cookies";
import { readForm } from "@/lib/http/body";
import { carriesFormToken } from "@/lib/http/csrf";
import { safeCallbackPath } from "@/lib/http/callback-url";
import { limited } from "@/lib/auth/limited";
import { csrfRefused, signOutUnavailable } from "@/lib/http/refusals";
import { json, jsonError } from "@/lib/http/responses";
import { messageOf } from "@/lib/log/message";

export const dynamic = "force-dynamic";

/**
 * Sign-out: the CSRF rule (from the app's own pages, which the wrapper checks, and the session's form
 * token when the cookie holds a session), the same single parse as sign-in, then the session record is ended and only then the cookie cleared. A record that could not be ended is a
 * 503 that keeps the cookie: a sign-out that looked done while the record stayed live would let a
 * copy of the cookie live on. With `json=true` the answer is `{ url }`, else a redirect (the
 * no-script form).
 */
export const POST = limited("/api/auth/signout", async (request, { gate }) => {
  const form = await readForm(request, gate.config.http.maxBodyBytes);
  if (!form.ok) return form.response;
  const input = signOutSchema.safeParse(form.value);
  if (!input.success) return jsonError(400, "invalid_input", "Reload the page and try again.", { fields: fieldErrors(input.error) });
  const { callbackUrl, json: wantsJson } = input.data;

  const claims = await sessionClaimsOfCookies(gate.config, cookieJar(request.cookies));
  if (typeof claims?.sub === "string" && typeof claims.sid === "string") {
    if (!carriesFormToken(gate.config, claims.sid, form.value)) return csrfRefused();
    try {
      await gate.sessions.revoke(claims.sub, claims.sid, gate.clock());
    } catch (error) {
      gate.log.error({ event: "session_revoke_failed", err: messageOf(error) });
      return signOutUnavailable();
    }
  }
  const target = safeCallbackPath(callbackUrl);
  const response = wantsJson
    ? json(200, { url: target })
    : new Response(null, { status: 302, headers: { Location: target, "Cache-Control": "no-store" } });
  response.headers.append("Set-Cookie", clearedSessionCookie(gate.config));
  return response;
});

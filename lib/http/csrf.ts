import type { AppConfig } from "@/lib/config/env";
import { isMediaType } from "./body";
import { isSessionFormToken } from "./form-token";
import type { Senders } from "./route-policies";
import { appOrigin, isSameOriginRequest } from "./same-origin";

type CsrfSettings = { http: Pick<AppConfig["http"], "publicUrl">; session: Pick<AppConfig["session"], "secret"> };

/**
 * Gatehouse's one CSRF rule, for every state-changing request a browser can send (OWASP CSRF
 * Prevention Cheat Sheet), in two steps:
 *
 * 1. `sender`: the request comes from the app's own origin (Fetch Metadata, else Origin), decided
 *    from its headers before the body is read. `limited` (lib/auth/limited.ts) runs it for every
 *    POST, PUT, PATCH and DELETE of every route, as the route's row of ROUTE_RULES says
 *    (`senders`), so a new route cannot forget it. This alone guards the posts no session stands
 *    behind (sign-in, registration, a second step, an emailed link's button).
 * 2. `carriesFormToken`: where a session exists, the form also carries the HMAC token of that
 *    session (./form-token.ts), which no other session's page and no other site can know. A
 *    cookie-authenticated JSON write (lib/auth/api-auth.ts) is JSON only instead: no other site
 *    can send a JSON body without a CORS preflight this app never allows.
 *
 * A request that names neither its site nor its origin comes from no browser of the last years
 * (every one sends Origin or Sec-Fetch-Site on a POST). It is refused, except where the route
 * takes such clients (`nonBrowser`: registration and the emailed links by script, as before this
 * rule) and its body is JSON, which even an old browser could not send from another site.
 * The token API for apps takes a request with no cookie from anywhere (`cookieless`): with no
 * cookie there is no ambient authority for another site to borrow. The API's writes also take a
 * request with a Bearer token whatever it carries besides (`bearer`): no browser adds that header
 * on its own, and those routes then authenticate by the token alone (apiCaller,
 * lib/auth/api-auth.ts: a bad token is a 401, never the cookie's session).
 */
export type SenderVerdict = "allowed" | "cross_site" | "json_required";

/** Only the headers, read by name: server.mjs's fast path passes Node's parsed ones. */
type HeaderReader = Pick<Headers, "get">;

/** Step 1 for one request, from its method and headers: no body is read. */
export function sender(headers: HeaderReader, method: string, senders: Senders | undefined, config: SenderSettings): SenderVerdict {
  if (method === "GET" || method === "HEAD" || method === "OPTIONS") return "allowed";
  if (senders?.anySite) return "allowed";
  if (senders?.cookieless && headers.get("cookie") === null) return "allowed";
  if (senders?.bearer && BEARER.test(headers.get("authorization") ?? "")) return "allowed";
  if (headers.get("sec-fetch-site") !== null || headers.get("origin") !== null)
    return fromOwnPages(headers, config) ? "allowed" : "cross_site";
  if (!senders?.nonBrowser) return "cross_site";
  return isMediaType(headers.get("content-type"), "application/json") ? "allowed" : "json_required";
}

/**
 * The Bearer scheme (any case, RFC 9110): a header only its holder's code writes. Basic is not
 * one: a browser adds the credentials it was given for a site to every request there.
 */
const BEARER = /^bearer /i;

type SenderSettings = { http: Pick<AppConfig["http"], "publicUrl"> };

/** Whether the request comes from the app's own pages: Fetch Metadata, else the exact Origin. */
export function fromOwnPages(headers: HeaderReader, config: SenderSettings): boolean {
  return isSameOriginRequest(headers, appOrigin(config.http.publicUrl));
}

/** Step 2: the form's `formToken` is the one of the session `sid`. */
export function carriesFormToken(config: CsrfSettings, sid: string, fields: Record<string, unknown>): boolean {
  return isSessionFormToken(config.session.secret, sid, fields.formToken);
}

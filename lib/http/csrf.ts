import type { AppConfig } from "@/lib/config/env";
import { isSessionFormToken } from "./form-token";
import { appOrigin, isSameOriginRequest } from "./same-origin";

type CsrfSettings = { http: Pick<AppConfig["http"], "publicUrl">; session: Pick<AppConfig["session"], "secret"> };

/**
 * Gatehouse's one CSRF rule, for every state-changing POST a browser can send (OWASP CSRF
 * Prevention Cheat Sheet), in two steps a route runs in this order:
 *
 * 1. `fromOwnPages`: the request comes from the app's own origin (Fetch Metadata, else Origin),
 *    before the body is read. This alone guards the posts no session stands behind (sign-in, a
 *    second step, an emailed link's button): a cross-site page cannot make a browser send one.
 * 2. `carriesFormToken`: where a session exists, the form also carries the HMAC token of that
 *    session (./form-token.ts), which no other session's page and no other site can know.
 *
 * A cookie-authenticated JSON write (lib/auth/api-auth.ts) passes step 1 and, instead of step 2,
 * is JSON only: no other site can send a JSON body without a CORS preflight this app never allows.
 * The same holds for the JSON routes no session stands behind (registration, the emailed links'
 * buttons, the token API): each reads `application/json` only (415 otherwise).
 */
export function fromOwnPages(headers: Headers, config: CsrfSettings): boolean {
  return isSameOriginRequest(headers, appOrigin(config.http.publicUrl));
}

/** Step 2: the form's `formToken` is the one of the session `sid`. */
export function carriesFormToken(config: CsrfSettings, sid: string, fields: Record<string, unknown>): boolean {
  return isSessionFormToken(config.session.secret, sid, fields.formToken);
}

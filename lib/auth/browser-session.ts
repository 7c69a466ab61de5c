import { inSpan } from "@/lib/tracing/spans";
import { cookies } from "next/headers";
import { cache } from "react";
import type { ClientAddress } from "@/lib/http/client-address";
import { truncateAddress } from "@/lib/events/security-events";
import { browserLabel } from "@/lib/sessions/browser-label";
import { judgeSession, sessionExpiresAtMs } from "@/lib/sessions/session-rules";
import { type Gatehouse, gatehouse } from "@/lib/app";
import { endRememberedBrowsers } from "@/lib/auth/remembered-browsers";
import type { SignInOutcome } from "@/lib/auth/sign-in-outcome";
import { safeCallbackPath } from "@/lib/http/callback-url";
import { setDeviceCookie, setRememberCookie, cookieJar } from "@/lib/http/cookies";
import { NEW_PASSWORD_PATH } from "@/lib/http/page-paths";
import { appOrigin } from "@/lib/http/same-origin";
import { unavailable } from "@/lib/http/refusals";
import { json } from "@/lib/http/responses";
import { revokeAllFamilies } from "@/lib/tokens/refresh-tokens";
import type { NewSession, SessionRenewal } from "@/lib/sessions/browser-sessions";
import { writeGuarded, type Writes } from "@/lib/db/one-statement";
import { credentialsUnchanged } from "@/lib/users/accounts";
import { sessionClaimsOfCookies, sessionCookie } from "./next-auth/session-cookie";
import { messageOf } from "@/lib/log/message";

/** A session cookie's claims as next-auth decoded them: nothing in them is trusted yet. */
export type SessionClaims = { sub?: unknown; sid?: unknown };

/** `passwordChangeRequired`: the account's password is breached; nothing but choosing a new one is served. */
export type LiveSession = { userId: string; sid: string; passwordChangeRequired: boolean };

/** Thrown from next-auth's jwt callback for a dead session: next-auth answers `{}` and clears the cookie. */
export class SessionEnded extends Error {
  constructor(readonly reason: string) {
    super(`session ended: ${reason}`);
    this.name = "SessionEnded";
  }
}

/**
 * A signed-in browser: its server record, whose id goes into the session JWT as `sid`, and the
 * `Set-Cookie` value that carries it. Sign-in, confirmation and a password change each end here;
 * `sessionId` is the id the "signed in" event already names ("this device" on the account page).
 * After a password change this is also the renewal OWASP asks for: a new id in a new cookie, so a
 * copy of the old cookie does not survive the change made to get rid of it.
 */
export async function openSession(
  gate: Gatehouse,
  user: { id: string; email: string; credentialGeneration: number },
  client: ClientAddress,
  userAgent: string | null,
  sessionId?: string,
  /** A renewal (the password change's) keeps the renewed session's last proof and absolute end. */
  renewal?: SessionRenewal,
): Promise<string> {
  const nowMs = gate.clock();
  const { id: sid } = await gate.sessions.create({
    ...browserSessionFields(gate, user, client, userAgent, sessionId, nowMs),
    ...(renewal ?? {}),
  });
  return sessionCookie(gate.config, { sub: user.id, email: user.email, sid }, nowMs);
}

/**
 * A finished sign-in's writes (its new device, its event and, for a browser, its session) in one
 * statement (lib/db/one-statement.ts): one round trip, and all of them or none, and none unless
 * the account is still under the credentials its check read (`credentialsUnchanged`). When they
 * are not written, no cookie at all: refused with the generic answer (null) when the credentials
 * changed or the account went since the check, with 503 when the database failed.
 */
export async function writeSignIn(
  gate: Gatehouse,
  user: { id: string; credentialGeneration: number },
  ...writes: Writes[]
): Promise<{ ok: true } | { ok: false; refusal: Response | null }> {
  return inSpan(
    "session write",
    () => writeSignInUntraced(gate, user, writes),
    (written) => (written.ok ? "written" : written.refusal ? "failed" : "superseded"),
  );
}

async function writeSignInUntraced(
  gate: Gatehouse,
  user: { id: string; credentialGeneration: number },
  writes: Writes[],
): Promise<{ ok: true } | { ok: false; refusal: Response | null }> {
  try {
    if (await writeGuarded(gate.sql, credentialsUnchanged(user), ...writes)) return { ok: true };
    gate.log.info({ event: "sign_in_superseded", userId: user.id });
    return { ok: false, refusal: null };
  } catch (error) {
    gate.log.error({ event: "session_start_failed", userId: user.id, err: messageOf(error) });
    gate.dataHealth.failed(error);
    return { ok: false, refusal: unavailable() };
  }
}

/** The record of a browser session signed in at `nowMs` (a new id unless `sessionId`). */
export function browserSessionFields(
  gate: Gatehouse,
  user: { id: string; credentialGeneration: number },
  client: ClientAddress,
  userAgent: string | null,
  sessionId: string | undefined,
  nowMs: number,
): NewSession {
  return {
    ...(sessionId ? { id: sessionId } : {}),
    userId: user.id,
    credentialGeneration: user.credentialGeneration,
    browser: browserLabel(userAgent),
    address: truncateAddress(client.address),
    nowMs,
    expiresAtMs: sessionExpiresAtMs(nowMs, gate.config.session.policy),
  };
}

/**
 * Where a browser that has just signed in goes, by every way in alike (a password, a passkey, a
 * second step, an emailed link): the callback it asked for, on this site (else `fallback`), unless
 * its password is breached; then only choosing a new one.
 */
export function landingPath(outcome: Extract<SignInOutcome, { ok: true }>, callbackUrl: string | undefined, fallback = "/"): string {
  return outcome.passwordChangeRequired ? NEW_PASSWORD_PATH : safeCallbackPath(callbackUrl, fallback);
}

/** `landingPath` as the absolute URL the sign-in page's script goes to. */
export function landingUrl(gate: Gatehouse, outcome: Extract<SignInOutcome, { ok: true }>, callbackUrl: string | undefined): string {
  return new URL(landingPath(outcome, callbackUrl), appOrigin(gate.config.http.publicUrl)).toString();
}

/**
 * The answer to a browser that has just signed in: `body` as JSON with its session cookie and its
 * new known-device cookie (OWASP device cookie), or 503 when no session record could be written
 * (then no cookie at all: the password was right, but nothing would recognise the session).
 */
export async function signedInBrowser(
  gate: Gatehouse,
  outcome: Extract<SignInOutcome, { ok: true }>,
  client: ClientAddress,
  userAgent: string | null,
  body: unknown,
): Promise<Response> {
  let session: string;
  try {
    // A sign-in that wrote its session with its device and event (completeSignIn) needs only the cookie.
    session = outcome.sessionOpen
      ? await sessionCookie(gate.config, { sub: outcome.user.id, email: outcome.user.email, sid: outcome.sessionId }, gate.clock())
      : await openSession(gate, outcome.user, client, userAgent, outcome.sessionId);
  } catch (error) {
    gate.log.error({ event: "session_start_failed", err: messageOf(error) });
    gate.dataHealth.failed(error);
    return unavailable();
  }
  const response = json(200, body);
  response.headers.append("Set-Cookie", session);
  if (outcome.remember) setRememberCookie(response, gate.config, outcome.remember.secret, outcome.remember.untilMs, gate.clock());
  return setDeviceCookie(response, gate.config, outcome.device.token, outcome.device.expiresAtMs, gate.clock());
}

/**
 * The one check every trusted session passes (next-auth's jwt callback for pages and
 * /api/auth/session, apiCaller for the API): a cookie without a `sid`, or whose record is
 * missing, another user's, revoked, idle or past its end, is no session. One indexed read; a
 * write at most once per touch interval. A database error propagates: no session is trusted
 * unchecked.
 */
export async function liveSession(gate: Gatehouse, claims: SessionClaims | null): Promise<LiveSession | null> {
  const userId = typeof claims?.sub === "string" ? claims.sub : null;
  const sid = typeof claims?.sid === "string" ? claims.sid : null;
  if (!userId || !sid) {
    if (claims) gate.log.info({ event: "session_refused", reason: "no_sid" });
    return null;
  }
  const nowMs = gate.clock();
  const record = await gate.sessions.find(sid);
  const verdict = judgeSession(record, userId, nowMs, gate.config.session.policy);
  if (!verdict.live) {
    gate.log.info({ event: "session_refused", reason: verdict.reason });
    return null;
  }
  if (verdict.touch) {
    // Only housekeeping: a failed touch costs the session a minute of idle time at worst.
    await gate.sessions
      .touch(sid, nowMs, nowMs - gate.config.session.policy.touchEveryMs)
      .catch((error: unknown) => gate.log.warn({ event: "session_touch_failed", err: messageOf(error) }));
  }
  return { userId, sid, passwordChangeRequired: record?.passwordBreached === true };
}

/** The live session that a request's session cookie names, for pages, the API and the account forms. */
export async function liveSessionOfCookies(
  gate: Gatehouse,
  cookies: Record<string, string>,
): Promise<(LiveSession & { email: string | null }) | null> {
  const claims = await sessionClaimsOfCookies(gate.config, cookies);
  const live = await liveSession(gate, claims);
  return live ? { ...live, email: typeof claims?.email === "string" ? claims.email : null } : null;
}

export type CurrentSession = { userId: string; sid: string; email: string | null; passwordChangeRequired: boolean };

/**
 * The signed-in browser session of this request, for pages and server components: the same
 * server-record check as every other route (liveSession). Cached per request, so a layout and
 * its page cost one read between them.
 */
export const currentSession = cache(async (): Promise<CurrentSession | null> => {
  const jar = cookieJar(await cookies());
  return liveSessionOfCookies(await gatehouse(), jar);
});

export type EndedSessions = { browserSessions: number; apiSessions: number; downloadTokens: number };

/**
 * Ends every browser session of the user but `keepSid` (all of them for null), every API session
 * (refresh family, and with it every access token it issued: apiCaller checks the family) and
 * every report download token (a session could have minted one, and a link outliving the
 * session would outlive its revocation). The password change and reset call this after the
 * UPDATE that raised the generation; "sign out everywhere" calls signOutEverywhere.
 */
export async function endOtherSessions(gate: Gatehouse, userId: string, keepSid: string | null, nowMs: number): Promise<EndedSessions> {
  const browserSessions = await gate.sessions.revokeAllExcept(userId, keepSid, nowMs);
  const db = gate.prisma;
  const apiSessions = await revokeAllFamilies(db, userId, nowMs);
  const { count: downloadTokens } = await db.downloadToken.deleteMany({ where: { userId } });
  return { browserSessions, apiSessions, downloadTokens };
}

/**
 * "Sign out everywhere else" and the operator's revoke-sessions: the generation is raised first
 * (keeping `keepSid`), so a sign-in whose password check ran before this and whose session or
 * tokens are written after it is dead too; the revocations then end what exists. Emailed links
 * issued before (reset, unlock) die with the generation as well: whoever is being shut out may
 * have asked for one. Every "Remember this browser" grant ends too.
 */
export async function signOutEverywhere(gate: Gatehouse, userId: string, keepSid: string | null, nowMs: number): Promise<EndedSessions> {
  await gate.sessions.raiseGeneration(userId, keepSid);
  const ended = await endOtherSessions(gate, userId, keepSid, nowMs);
  // Whoever is being shut out may sit at a remembered browser: its second step is asked again.
  await endRememberedBrowsers(gate, userId);
  return ended;
}

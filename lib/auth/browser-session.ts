import { getToken } from "next-auth/jwt";
import { log } from "@/lib/log/logger";
import type { ClientAddress } from "@/lib/http/client-address";
import { truncateAddress } from "@/lib/events/security-events";
import { browserLabel } from "@/lib/sessions/browser-label";
import { judgeSession, sessionExpiresAtMs } from "@/lib/sessions/rules";
import type { Gatehouse } from "./gatehouse";

/** A session cookie's claims as next-auth decoded them: nothing in them is trusted yet. */
export type SessionClaims = { sub?: unknown; sid?: unknown };

export type LiveSession = { userId: string; sid: string };

/** Thrown from next-auth's jwt callback for a dead session: next-auth answers `{}` and clears the cookie. */
export class SessionEnded extends Error {
  constructor(readonly reason: string) {
    super(`session ended: ${reason}`);
    this.name = "SessionEnded";
  }
}

/** The server record of a browser that has just signed in; its id goes into the JWT as `sid`. */
export async function startBrowserSession(
  gate: Gatehouse,
  user: { id: string; credentialGeneration: number },
  client: ClientAddress,
  userAgent: string | null,
  sessionId?: string,
): Promise<string> {
  const nowMs = gate.clock();
  const { id } = await gate.sessions.create({
    ...(sessionId ? { id: sessionId } : {}),
    userId: user.id,
    credentialGeneration: user.credentialGeneration,
    browser: browserLabel(userAgent),
    address: truncateAddress(client.address),
    nowMs,
    expiresAtMs: sessionExpiresAtMs(nowMs, gate.sessionPolicy),
  });
  return id;
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
    if (claims) log().info({ event: "session_refused", reason: "no_sid" });
    return null;
  }
  const nowMs = gate.clock();
  const verdict = judgeSession(await gate.sessions.find(sid), userId, nowMs, gate.sessionPolicy);
  if (!verdict.live) {
    log().info({ event: "session_refused", reason: verdict.reason });
    return null;
  }
  if (verdict.touch) {
    // Only housekeeping: a failed touch costs the session a minute of idle time at worst.
    await gate.sessions
      .touch(sid, nowMs, nowMs - gate.sessionPolicy.touchEveryMs)
      .catch((error: unknown) =>
        log().warn({ event: "session_touch_failed", err: error instanceof Error ? error.message : String(error) }),
      );
  }
  return { userId, sid };
}

/**
 * The live session that a request's session cookie names, for the callers outside next-auth
 * (pages, the API, the account forms). Only the cookie is read: getToken would also take a
 * Bearer header as a session token.
 */
export async function liveSessionOfCookies(
  gate: Gatehouse,
  cookies: Record<string, string>,
): Promise<(LiveSession & { email: string | null }) | null> {
  const claims = await getToken({ req: { cookies, headers: {} } as never, secret: gate.config.NEXTAUTH_SECRET });
  const live = await liveSession(gate, claims);
  return live ? { ...live, email: typeof claims?.email === "string" ? claims.email : null } : null;
}

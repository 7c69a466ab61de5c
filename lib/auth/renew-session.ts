import { encode } from "next-auth/jwt";
import type { ClientAddress } from "@/lib/http/client-address";
import { appOrigin } from "@/lib/http/same-origin";
import { startBrowserSession } from "./browser-session";
import type { Gatehouse } from "./gatehouse";

/**
 * A new session for this browser, in a new cookie, after the old one's record was ended (OWASP:
 * renew the session id when the credentials change): a copy of the old cookie, wherever it went,
 * does not survive a password change made to get rid of it. The cookie is the one next-auth
 * would set: same name, attributes and lifetime.
 */
export async function renewBrowserSession(
  gate: Gatehouse,
  user: { id: string; email: string; credentialGeneration: number },
  client: ClientAddress,
  userAgent: string | null,
  sessionId?: string,
): Promise<string> {
  const sid = await startBrowserSession(gate, user, client, userAgent, sessionId);
  const maxAgeSeconds = gate.config.SESSION_MAX_AGE_SECONDS;
  const token = await encode({
    token: { sub: user.id, email: user.email, sid },
    secret: gate.config.NEXTAUTH_SECRET,
    maxAge: maxAgeSeconds,
  });
  const secure = appOrigin(gate.config.NEXTAUTH_URL).startsWith("https://");
  const expires = new Date(gate.clock() + maxAgeSeconds * 1000).toUTCString();
  return [
    `${secure ? "__Secure-" : ""}next-auth.session-token=${token}`,
    "Path=/",
    `Expires=${expires}`,
    "HttpOnly",
    "SameSite=Lax",
    ...(secure ? ["Secure"] : []),
  ].join("; ");
}

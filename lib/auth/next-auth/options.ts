import type { NextAuthOptions } from "next-auth";
import { safeRedirect } from "@/lib/http/callback-url";
import { liveSession, SessionEnded } from "../browser-session";
import type { Gatehouse } from "@/lib/app";
import { nextAuthCookies } from "./session-cookie";

/**
 * next-auth's options for one Gatehouse: its secret, its session lifetime, the session cookie's name
 * (./session-cookie.ts), and no provider at all. Sign-in and sign-out are Gatehouse's own routes, which
 * write and clear the same cookie next-auth reads; next-auth answers only `session`,
 * so no next-auth code path can verify a password or start a session.
 */
export function authOptions(gate: Gatehouse): NextAuthOptions {
  const { config } = gate;
  return {
    secret: config.session.secret,
    session: { strategy: "jwt", maxAge: config.session.maxAgeSeconds },
    cookies: nextAuthCookies(config),
    pages: { signIn: "/sign-in", error: "/sign-in" },
    logger: {
      // A dead session is an answer (an empty session), not an error; liveSession logged why.
      error: (code, metadata) => {
        if ((metadata as { name?: unknown } | undefined)?.name !== "SessionEnded") gate.log.error({ event: "nextauth_error", code });
      },
      warn: (code) => gate.log.warn({ event: "nextauth_warning", code }),
      debug: () => {},
    },
    providers: [],
    callbacks: {
      redirect: ({ url, baseUrl }) => safeRedirect(url, baseUrl),
      /**
       * Every read of a session (GET /api/auth/session): the server record decides
       * (liveSession), and a dead one ends here with an empty session and a cleared cookie.
       * next-auth never starts a session here: it has no provider that could sign anyone in.
       */
      async jwt({ token, trigger }) {
        if (trigger) throw new SessionEnded(`unexpected_${trigger}`);
        const live = await liveSession(gate, token);
        if (!live) throw new SessionEnded("dead");
        return token;
      },
      session({ session, token }) {
        if (session.user && token.sub) session.user.id = token.sub;
        return session;
      },
    },
  };
}

import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { safeRedirect } from "@/lib/http/callback-url";
import { log } from "@/lib/log/logger";
import { liveSession, SessionEnded, startBrowserSession } from "./browser-session";
import { signInSchema } from "./credentials";
import type { Gatehouse } from "./gatehouse";
import { checkPassword } from "./sign-in";

/** next-auth's options for one Gatehouse: its secret, its session lifetime, its password check. */
export function authOptions(gate: Gatehouse): NextAuthOptions {
  const { config } = gate;
  return {
    secret: config.NEXTAUTH_SECRET,
    session: { strategy: "jwt", maxAge: config.SESSION_MAX_AGE_SECONDS },
    pages: { signIn: "/sign-in", error: "/sign-in" },
    logger: {
      // A dead session is an answer (an empty session), not an error; liveSession logged why.
      error: (code, metadata) => {
        if ((metadata as { name?: unknown } | undefined)?.name !== "SessionEnded") log().error({ event: "nextauth_error", code });
      },
      warn: (code) => log().warn({ event: "nextauth_warning", code }),
      debug: () => {},
    },
    providers: [
      CredentialsProvider({
        name: "Email and password",
        credentials: {
          email: { label: "Email", type: "email" },
          password: { label: "Password", type: "password" },
        },
        /**
         * Only the sign-in route can get here with an admission (it carries one through the
         * request's async context). Without one, or with fields that differ from the admitted
         * ones, nothing is verified and nothing is counted.
         */
        async authorize(credentials) {
          const slot = gate.admissions.current();
          if (!slot) {
            log().error({ event: "password_check_refused", reason: "no_admission" });
            return null;
          }
          const parsed = signInSchema.safeParse(credentials ?? {});
          if (!parsed.success || parsed.data.email !== slot.admission.email || parsed.data.password !== slot.admission.password) {
            log().error({ event: "password_check_refused", reason: "admission_mismatch" });
            return null;
          }
          slot.outcome = await checkPassword(gate, slot.admission);
          return slot.outcome.ok ? slot.outcome.user : null;
        },
      }),
    ],
    events: {
      // Runs only after next-auth's CSRF check passed. next-auth clears the cookie whatever happens
      // here, so a failure is reported to the sign-out route, which then answers 503 and keeps the
      // cookie: a sign-out that looked done while the record stayed live would let a copy live on.
      async signOut({ token }) {
        if (typeof token?.sid !== "string" || typeof token.sub !== "string") return;
        try {
          await gate.sessions.revoke(token.sub, token.sid, gate.clock());
        } catch (error) {
          log().error({ event: "session_revoke_failed", err: error instanceof Error ? error.message : String(error) });
          const scope = gate.signOuts.getStore();
          if (scope) scope.revokeFailed = true;
        }
      },
    },
    callbacks: {
      redirect: ({ url, baseUrl }) => safeRedirect(url, baseUrl),
      /**
       * Sign-in: a server record for this browser, only for the user this request's own password
       * check admitted; its id becomes the JWT's `sid`. Every later read: the record decides
       * (liveSession), and a dead one ends here with an empty session and a cleared cookie.
       */
      async jwt({ token, user, trigger }) {
        if (trigger === "signIn") {
          const slot = gate.admissions.current();
          if (!slot?.outcome?.ok || slot.outcome.user.id !== user?.id) throw new SessionEnded("sign_in_without_admission");
          return {
            ...token,
            sid: await startBrowserSession(
              gate,
              slot.outcome.user,
              slot.admission.client,
              slot.admission.userAgent,
              slot.admission.sessionId,
            ),
          };
        }
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

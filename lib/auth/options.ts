import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { getConfig } from "@/lib/config/env";
import { safeRedirect } from "@/lib/http/callback-url";
import { log } from "@/lib/log/logger";
import { signInSchema } from "./credentials";
import { gatehouse } from "./gatehouse";
import { checkPassword } from "./sign-in";

export function authOptions(): NextAuthOptions {
  const config = getConfig();
  return {
    secret: config.NEXTAUTH_SECRET,
    session: { strategy: "jwt", maxAge: config.SESSION_MAX_AGE_SECONDS },
    pages: { signIn: "/sign-in", error: "/sign-in" },
    logger: {
      error: (code) => log().error({ event: "nextauth_error", code }),
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
          const gate = await gatehouse();
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
    callbacks: {
      redirect: ({ url, baseUrl }) => safeRedirect(url, baseUrl),
      session({ session, token }) {
        if (session.user && token.sub) (session.user as { id?: string }).id = token.sub;
        return session;
      },
    },
  };
}

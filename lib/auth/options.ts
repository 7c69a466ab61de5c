import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { getConfig } from "@/lib/config/env";
import { log } from "@/lib/log/logger";
import { authenticate } from "./authenticate";
import { signInSchema } from "./credentials";
import { gatehouse } from "./gatehouse";

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
        async authorize(credentials, req) {
          const parsed = signInSchema.safeParse(credentials ?? {});
          // Malformed input gets the same generic refusal as a wrong password.
          if (!parsed.success) return null;
          const gate = await gatehouse();
          // next-auth passes the request's headers: the client address comes from them as everywhere.
          const client = gate.clientAddress(new Headers((req?.headers ?? {}) as Record<string, string>));
          return authenticate(gate, parsed.data, client);
        },
      }),
    ],
    callbacks: {
      session({ session, token }) {
        if (session.user && token.sub) (session.user as { id?: string }).id = token.sub;
        return session;
      },
    },
  };
}

import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { getConfig } from "@/lib/config/env";
import { prisma } from "@/lib/db/client";
import { log } from "@/lib/log/logger";
import { argon2Params } from "@/lib/password/params";
import { verifyCredentials } from "@/lib/users/accounts";
import { signInSchema } from "./credentials";

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
        async authorize(credentials) {
          const parsed = signInSchema.safeParse(credentials ?? {});
          // Malformed input gets the same generic refusal as a wrong password.
          if (!parsed.success) return null;
          const user = await verifyCredentials(await prisma(), parsed.data, argon2Params(config.ARGON2_PROFILE), (error) =>
            log().warn({ event: "password_rehash_failed", err: error instanceof Error ? error.message : String(error) }),
          );
          if (!user) {
            log().info({ event: "sign_in_failed" });
            return null;
          }
          log().info({ event: "sign_in_succeeded", userId: user.id, rehashed: user.rehashed });
          return { id: user.id, email: user.email };
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

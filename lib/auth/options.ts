import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { getConfig } from "@/lib/config/env";
import { prisma } from "@/lib/db/client";
import { log } from "@/lib/log/logger";
import { verifyCredentials } from "@/lib/users/accounts";
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
        async authorize(credentials) {
          const parsed = signInSchema.safeParse(credentials ?? {});
          // Malformed input gets the same generic refusal as a wrong password.
          if (!parsed.success) return null;
          const gate = await gatehouse();
          const usernameKey = gate.usernameKey(parsed.data.email);
          const user = await verifyCredentials(await prisma(), parsed.data, gate.argon2, (error) =>
            log().warn({ event: "password_rehash_failed", err: error instanceof Error ? error.message : String(error) }),
          );
          if (!user) {
            // Counted for unknown usernames too, so a lockout does not reveal which accounts exist.
            const state = await gate.lockouts.recordFailure(usernameKey, gate.clock(), gate.lockoutPolicy);
            log().info({ event: "sign_in_failed", failureCount: state.failureCount, locked: state.lockedUntilMs !== null });
            return null;
          }
          await gate.lockouts.reset(usernameKey);
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

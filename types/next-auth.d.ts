import type { DefaultSession } from "next-auth";

// The user id rides in the session (lib/auth/next-auth/options.ts's session callback) and the
// browser session's id in the JWT (`sid`, its server record, written by sessionCookie in
// lib/auth/next-auth/session-cookie.ts, read by liveSession): typed here once, instead of cast where read.
declare module "next-auth" {
  interface Session {
    user?: DefaultSession["user"] & { id?: string };
  }
}

declare module "next-auth/jwt" {
  interface JWT {
    sid?: string;
  }
}

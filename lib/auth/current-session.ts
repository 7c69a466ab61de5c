import { getToken } from "next-auth/jwt";
import { cookies, headers } from "next/headers";
import { cache } from "react";
import { liveSession } from "./browser-session";
import { gatehouse } from "./gatehouse";

export type CurrentSession = { userId: string; sid: string; email: string | null };

/**
 * The signed-in browser session of this request, for pages and server components: the cookie
 * decoded, then the same server-record check as every other route (liveSession). Cached per
 * request, so a layout and its page cost one read between them.
 */
export const currentSession = cache(async (): Promise<CurrentSession | null> => {
  const gate = await gatehouse();
  const req = { headers: Object.fromEntries(await headers()), cookies: Object.fromEntries((await cookies()).getAll().map((c) => [c.name, c.value])) };
  // Only the cookie counts here: getToken would also read a Bearer header as a session token.
  delete (req.headers as Record<string, string>).authorization;
  const claims = await getToken({ req: req as never, secret: gate.config.NEXTAUTH_SECRET });
  const live = await liveSession(gate, claims);
  if (!live) return null;
  return { ...live, email: typeof claims?.email === "string" ? claims.email : null };
});

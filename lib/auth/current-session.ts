import { cookies } from "next/headers";
import { cache } from "react";
import { liveSessionOfCookies } from "./browser-session";
import { gatehouse } from "./gatehouse";
import { cookieJar } from "./next-auth/cookies";

export type CurrentSession = { userId: string; sid: string; email: string | null; passwordChangeRequired: boolean };

/**
 * The signed-in browser session of this request, for pages and server components: the same
 * server-record check as every other route (liveSession). Cached per request, so a layout and
 * its page cost one read between them.
 */
export const currentSession = cache(async (): Promise<CurrentSession | null> => {
  const jar = cookieJar(await cookies());
  return liveSessionOfCookies(await gatehouse(), jar);
});

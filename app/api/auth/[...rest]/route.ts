import { limited } from "@/lib/auth/limited";
import { jsonError } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

/**
 * Every /api/auth path the app does not use: next-auth's other actions (`_log`, `signin`,
 * `providers`, other providers' callbacks) and every other path shape (extra segments, another
 * case, an encoded slash). Nothing here reaches next-auth.
 */
const notFound = limited("/api/auth/[...rest]", async () => jsonError(404, "not_found", "No such endpoint."));

export { notFound as GET, notFound as POST, notFound as PUT, notFound as PATCH, notFound as DELETE, notFound as HEAD, notFound as OPTIONS };

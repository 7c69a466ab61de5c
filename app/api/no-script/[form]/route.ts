import { NextResponse } from "next/server";
import { safeCallbackPath } from "@/lib/http/callback-url";
import { limited } from "@/lib/auth/limited";
import { jsonError } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

const PAGES = new Set([
  "sign-in",
  "register",
  "forgot-password",
  "reset-password",
  "verify-email",
  "unlock",
  "confirm-email-change",
  "undo-email-change",
  "not-me",
]);

/**
 * Where the sign-in and registration forms post when JavaScript has not taken them over (it is
 * off, or the form was sent before the page hydrated). The body, which holds the password, is
 * never read: without JavaScript there is no proof of work, so the attempt could not pass anyway.
 * The browser is sent back to its page (303: a GET with nothing from the form in the URL), which
 * says why. Without this action a form with none would submit as GET, password in the URL.
 */
export const POST = limited("/api/no-script/[form]", async (request, _limits, context: { params: Promise<{ form: string }> }) => {
  const { form } = await context.params;
  await request.body?.cancel();
  if (!PAGES.has(form)) return jsonError(404, "not_found", "No such endpoint.");
  const target = new URL(`/${form}`, request.url);
  target.searchParams.set("notice", "javascript");
  const callbackUrl = new URL(request.url).searchParams.get("callbackUrl");
  if (form === "sign-in" && callbackUrl) target.searchParams.set("callbackUrl", safeCallbackPath(callbackUrl));
  // Relative: the Location stays on whatever origin the browser used.
  return new NextResponse(null, { status: 303, headers: { Location: `${target.pathname}${target.search}`, "Cache-Control": "no-store" } });
});

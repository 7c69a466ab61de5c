import { NextResponse } from "next/server";
import { safeCallbackPath } from "@/lib/http/callback-url";
import { limited } from "@/lib/auth/limited";
import { jsonError } from "@/lib/http/responses";
import { readForm } from "@/lib/http/body";
import { carriedEmailCookie } from "@/lib/http/carried-email";

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
 * never read (but forgot-password's address, which it keeps): without JavaScript there is no proof
 * of work, so the attempt could not pass anyway.
 * The browser is sent back to its page (303: a GET with nothing from the form in the URL), which
 * says why. Without this action a form with none would submit as GET, password in the URL.
 */
export const POST = limited("/api/no-script/[form]", async (request, { gate }, context: { params: Promise<{ form: string }> }) => {
  const { form } = await context.params;
  if (!PAGES.has(form)) {
    await request.body?.cancel();
    return jsonError(404, "not_found", "No such endpoint.");
  }
  // "Forgot password?" has no password in it: its address is kept (in a cookie for that page,
  // never in the URL), so the person does not type it again. From this app's own page only, as
  // every post here (the wrapper's same-origin check).
  let keep: string | null = null;
  if (form === "forgot-password") {
    const body = await readForm(request, gate.config.http.maxBodyBytes);
    keep = body.ok ? carriedEmailCookie(body.value.email, gate.config) : null;
  } else {
    await request.body?.cancel();
  }
  const target = new URL(`/${form}`, request.url);
  target.searchParams.set("notice", "javascript");
  const callbackUrl = new URL(request.url).searchParams.get("callbackUrl");
  if (form === "sign-in" && callbackUrl) target.searchParams.set("callbackUrl", safeCallbackPath(callbackUrl));
  // Relative: the Location stays on whatever origin the browser used.
  const headers = new Headers({ Location: `${target.pathname}${target.search}`, "Cache-Control": "no-store" });
  if (keep) headers.set("Set-Cookie", keep);
  return new NextResponse(null, { status: 303, headers });
});

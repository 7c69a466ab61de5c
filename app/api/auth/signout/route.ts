import { fieldErrors, signOutSchema } from "@/lib/auth/credentials";
import { callNextAuth } from "@/lib/auth/next-auth-call";
import { readForm } from "@/lib/http/body";
import { safeCallbackPath } from "@/lib/http/callback-url";
import { limited } from "@/lib/http/limited";
import { csrfRefused, signOutUnavailable } from "@/lib/http/refusals";
import { jsonError } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

/** Sign-out: the same single parse as sign-in, then next-auth's CSRF check and cookie clearing. */
export const POST = limited("/api/auth/signout", async (request, limits) => {
  const form = await readForm(request, limits.gate.config.MAX_BODY_BYTES);
  if (!form.ok) return form.response;
  const input = signOutSchema.safeParse(form.value);
  if (!input.success) return jsonError(400, "invalid_input", "Reload the page and try again.", { fields: fieldErrors(input.error) });
  const { csrfToken, callbackUrl, json } = input.data;
  const scope = { revokeFailed: false };
  const result = await limits.gate.signOuts.run(scope, () =>
    callNextAuth(limits.gate, request, ["signout"], { csrfToken, callbackUrl: safeCallbackPath(callbackUrl), ...(json ? { json } : {}) }),
  );
  // The session record could not be ended: say so and keep the cookie (result is dropped), so
  // the user can try again rather than leave a live session behind a cleared cookie.
  if (scope.revokeFailed) return signOutUnavailable();
  // next-auth answers a failed CSRF check by pointing at its own sign-out page, which the app
  // does not serve; say what happened instead.
  const target =
    result.headers.get("location") ??
    (
      (await result
        .clone()
        .json()
        .catch(() => ({}))) as { url?: string }
    ).url ??
    "";
  return target.includes("csrf=true") ? csrfRefused() : result;
});

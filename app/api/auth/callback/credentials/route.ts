import { browserSignInSchema, fieldErrors } from "@/lib/auth/credentials";
import { callNextAuth } from "@/lib/auth/next-auth-call";
import { admitSignIn } from "@/lib/auth/sign-in";
import { readForm } from "@/lib/http/body";
import { safeCallbackPath } from "@/lib/http/callback-url";
import { deviceTokenOf, setDeviceCookie } from "@/lib/http/device-cookie";
import { limited } from "@/lib/http/limited";
import { csrfRefused, unavailable } from "@/lib/http/refusals";
import { accept, refuse } from "@/lib/http/refused";
import { jsonError } from "@/lib/http/responses";
import { log } from "@/lib/log/logger";
import { ENTER_EMAIL_AND_PASSWORD } from "@/lib/ui/messages";

export const dynamic = "force-dynamic";

/**
 * Browser sign-in, cheapest layer first: the per-address limit (the wrapper, before the body),
 * one parse of the form, the per-username limit, ALTCHA, the known-device cookie and the lockout
 * (admitSignIn); then
 * next-auth, whose authorize() runs checkPassword with this request's admission: the hash
 * budget, the lockout again, and Argon2id. A refusal from inside is answered as JSON here.
 */
export const POST = limited("/api/auth/callback/credentials", async (request, limits) => {
  const admitted = await admitSignIn(limits, async () => {
    const form = await readForm(request, limits.gate.config.MAX_BODY_BYTES);
    if (!form.ok) return form;
    const input = browserSignInSchema.safeParse(form.value);
    if (!input.success) return refuse(jsonError(400, "invalid_input", ENTER_EMAIL_AND_PASSWORD, { fields: fieldErrors(input.error) }));
    return accept({ value: { ...input.data, deviceToken: deviceTokenOf(request) } });
  });
  if (!admitted.ok) return admitted.response;

  const { value, admission } = admitted;
  // next-auth sees exactly the admitted fields, rebuilt: one parse, one truth.
  const canonical: Record<string, string> = {
    csrfToken: value.csrfToken,
    email: admission.email,
    password: admission.password,
    callbackUrl: safeCallbackPath(value.callbackUrl),
    ...(value.json ? { json: value.json } : {}),
  };
  let carried;
  try {
    carried = await limits.gate.admissions.carry(admission, () =>
      callNextAuth(limits.gate, request, ["callback", "credentials"], canonical),
    );
  } catch (error) {
    // next-auth lets an error from the jwt callback through: the session record could not be written.
    log().error({ event: "session_start_failed", err: error instanceof Error ? error.message : String(error) });
    if (admission.device) await limits.gate.devices.release(admission.device.id).catch(() => {});
    return unavailable();
  }
  const { result, outcome } = carried;
  // authorize() never ran: next-auth's CSRF check refused (its answer would read as a success).
  if (!outcome) {
    if (admission.device) await limits.gate.devices.release(admission.device.id);
    return csrfRefused();
  }
  if (!outcome.ok) return outcome.refusal ?? result;
  // The password was right but no session record could be made (the jwt callback failed): no cookie, say so.
  if (!result.headers.getSetCookie().some((cookie) => /session-token=[^;]+/.test(cookie))) return unavailable();
  // Signed in: this browser is now a known device of this account (OWASP device cookie).
  return setDeviceCookie(result, outcome.device.token, outcome.device.expiresAtMs, limits.gate.clock());
});

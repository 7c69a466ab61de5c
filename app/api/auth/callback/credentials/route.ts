import { landingUrl, signedInBrowser } from "@/lib/auth/browser-session";
import { browserSignInSchema, fieldErrors } from "@/lib/auth/credentials";
import { cookieJar, csrfVerified } from "@/lib/auth/next-auth/cookies";
import { signInWithPassword } from "@/lib/auth/sign-in";
import { secondStepRequired } from "@/lib/auth/second-step";
import { readForm } from "@/lib/http/body";
import { deviceTokenOf, rememberSecretOf } from "@/lib/http/device-cookie";
import { limited } from "@/lib/auth/limited";
import { csrfRefused } from "@/lib/http/refusals";
import { jsonError } from "@/lib/http/responses";
import { ENTER_EMAIL_AND_PASSWORD, INCORRECT_CREDENTIALS } from "@/lib/ui/messages";

export const dynamic = "force-dynamic";

/**
 * Browser sign-in, the whole corridor: the per-address limit (the wrapper, before the body), one
 * parse of the form, next-auth's CSRF double-submit check, then signInWithPassword (per-username
 * limit, known device, ALTCHA, lockout, hash budget, Argon2id), then the session. Every answer is
 * JSON: 200 `{ url }` with the session and device cookies, 401 for any wrong email or password,
 * 401 `mfa_required` with a pending sign-in (and no session) for an account with a second step,
 * 400/429/503 for the refusals.
 */
export const POST = limited("/api/auth/callback/credentials", async (request, limits) => {
  const { gate } = limits;
  const form = await readForm(request, gate.config.http.maxBodyBytes);
  if (!form.ok) return form.response;
  const input = browserSignInSchema.safeParse(form.value);
  if (!input.success) return jsonError(400, "invalid_input", ENTER_EMAIL_AND_PASSWORD, { fields: fieldErrors(input.error) });
  const { email, password, altcha, csrfToken, callbackUrl } = input.data;
  // Before any lookup: a cross-site form cannot know the token in this browser's cookie.
  if (!csrfVerified(gate.config, cookieJar(request.cookies), csrfToken)) {
    return csrfRefused();
  }

  const outcome = await signInWithPassword(
    limits,
    { email, password, deviceToken: deviceTokenOf(request, gate.config), rememberSecret: rememberSecretOf(request, gate.config) },
    { altcha, intent: { kind: "sign_in", channel: "browser" } },
  );
  if (outcome.ok === false) return outcome.refusal ?? jsonError(401, "invalid_credentials", INCORRECT_CREDENTIALS);
  if (outcome.ok === "second_step") return secondStepRequired(gate, outcome.pending, "browser");

  return signedInBrowser(gate, outcome, limits.client, limits.userAgent, { url: landingUrl(gate, outcome, callbackUrl) });
});

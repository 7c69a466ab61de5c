import { landingUrl, signedInBrowser } from "@/lib/auth/browser-session";
import { browserSignInSchema, fieldErrors } from "@/lib/auth/credentials";
import { signInWithPassword } from "@/lib/auth/sign-in";
import { secondStepRequired } from "@/lib/auth/second-step";
import { readForm } from "@/lib/http/body";
import { deviceTokenOf, rememberSecretOf } from "@/lib/http/cookies";
import { limited } from "@/lib/auth/limited";
import { answeredInFront } from "@/lib/auth/in-front";
import { jsonError } from "@/lib/http/responses";
import { ENTER_EMAIL_AND_PASSWORD, INCORRECT_CREDENTIALS } from "@/lib/ui/messages";

export const dynamic = "force-dynamic";

/**
 * Browser sign-in, the whole corridor: the per-address limit (the wrapper, before the body), the
 * CSRF rule (the wrapper's: from the app's own pages, no session exists yet), one parse of the form, then signInWithPassword (per-username
 * limit, known device, ALTCHA, lockout, hash budget, Argon2id), then the session. Every answer is
 * JSON: 200 `{ url }` with the session and device cookies, 401 for any wrong email or password,
 * 401 `mfa_required` with a pending sign-in (and no session) for an account with a second step,
 * 400/429/503 for the refusals.
 */
export const POST = limited("/api/auth/callback/credentials", async (request, limits) => {
  const { gate } = limits;
  // Before the body and any lookup: another site cannot make a browser sign in (login CSRF).
  const form = await readForm(request, gate.config.http.maxBodyBytes);
  if (!form.ok) return form.response;
  const input = browserSignInSchema.safeParse(form.value);
  if (!input.success) return jsonError(400, "invalid_input", ENTER_EMAIL_AND_PASSWORD, { fields: fieldErrors(input.error) });
  const { email, password, altcha, callbackUrl } = input.data;

  const outcome = await signInWithPassword(
    limits,
    { email, password, deviceToken: deviceTokenOf(request, gate.config), rememberSecret: rememberSecretOf(request, gate.config) },
    { altcha, intent: { kind: "sign_in", channel: "browser" } },
  );
  if (outcome.ok === false) return outcome.refusal ?? jsonError(401, "invalid_credentials", INCORRECT_CREDENTIALS);
  if (outcome.ok === "second_step") return secondStepRequired(gate, outcome.pending, "browser");

  return signedInBrowser(gate, outcome, limits.client, limits.userAgent, { url: landingUrl(gate, outcome, callbackUrl) });
});

// The route every sign-in from a new address takes: server.mjs calls this handler itself once it
// is loaded, without Next.js's router (docs/decisions/0042).
answeredInFront("POST", "/api/auth/callback/credentials", POST);

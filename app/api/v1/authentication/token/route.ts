import { apiSignInSchema, fieldErrors } from "@/lib/auth/credentials";
import { signInWithPassword } from "@/lib/auth/sign-in";
import { secondStepRequired } from "@/lib/auth/second-step";
import { readJson } from "@/lib/http/body";
import { deviceTokenOf } from "@/lib/http/cookies";
import { limited } from "@/lib/auth/limited";
import { json, jsonError } from "@/lib/http/responses";
import { apiTokensFor } from "@/lib/auth/api-sign-in";
import { ENTER_EMAIL_AND_PASSWORD, INCORRECT_CREDENTIALS } from "@/lib/ui/messages";

export const dynamic = "force-dynamic";

// Word for word what the browser sign-in shows: nothing tells a wrong password from an unknown account.
const INVALID_CREDENTIALS = { error: "invalid_credentials", message: INCORRECT_CREDENTIALS } as const;

/**
 * Password sign-in for API clients: one parse of the JSON body, then the browser's corridor
 * (signInWithPassword: per-username limit, ALTCHA, the shared username lockout, the hash budget,
 * the lockout again and Argon2id) behind a sliding-window limit per client address and path. A
 * known device sends the `device_token` from its last sign-in (or the browser's device cookie)
 * and gets a new one. An account with a second step gets 401 `mfa_required` with an `mfa_token`
 * and no token pair: the code goes to POST /api/v1/authentication/token/mfa. Only JSON is read: a
 * cross-site form cannot send it without a CORS preflight.
 */
export const POST = limited("/api/v1/authentication/token", async (request, limits) => {
  const { gate, client } = limits;
  const body = await readJson(request, gate.config.http.maxBodyBytes);
  if (!body.ok) return body.response;
  const input = apiSignInSchema.safeParse(body.value);
  if (!input.success) return jsonError(400, "invalid_input", ENTER_EMAIL_AND_PASSWORD, { fields: fieldErrors(input.error) });
  const { email, password, altcha, device_token } = input.data;
  // An app keeps its device token in the body; a browser calling the API sends its cookie.
  const deviceToken = device_token ?? deviceTokenOf(request, gate.config);

  const checked = await signInWithPassword(
    limits,
    { email, password, deviceToken },
    { altcha, intent: { kind: "sign_in", channel: "api" } },
  );
  if (checked.ok === false) return checked.refusal ?? json(401, INVALID_CREDENTIALS);
  if (checked.ok === "second_step") return secondStepRequired(gate, checked.pending, "api");
  return apiTokensFor(gate, request, client, checked, device_token !== undefined);
});

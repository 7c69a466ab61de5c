import { apiSecondStepSchema, answerRefused, passSecondStep } from "@/lib/auth/second-step";
import { readJson } from "@/lib/http/body";
import { limited } from "@/lib/auth/limited";
import { apiTokensFor } from "@/lib/auth/api-sign-in";

export const dynamic = "force-dynamic";

/**
 * An API client's second step: `{ mfa_token, code }` or `{ mfa_token, recovery_code }` after the
 * password step answered 401 `mfa_required`. The per-address limit (before the body), one parse of
 * the JSON body, then passSecondStep (the pending sign-in of this `mfa_token`, API-only and
 * counted; the per-account limit; the second step's lock, counted; the code, good once), then the
 * token pair: no access or refresh token exists before this answer.
 */
export const POST = limited("/api/v1/authentication/token/mfa", async (request, limits) => {
  const { gate, client } = limits;
  const body = await readJson(request, gate.config.http.maxBodyBytes);
  if (!body.ok) return body.response;
  const input = apiSecondStepSchema.safeParse(body.value);
  if (!input.success) return answerRefused(input.error);
  const passed = await passSecondStep(limits, input.data.mfaToken, "api", input.data.answer, null, ["second_factor"]);
  if (!passed.ok) return passed.refusal;
  return apiTokensFor(gate, request, client, passed.finished, false);
});

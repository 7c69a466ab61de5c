import { answerRefused, apiDeviceConfirmationSchema, passSecondStep } from "@/lib/auth/second-step";
import { readJson } from "@/lib/http/body";
import { limited } from "@/lib/auth/limited";
import { apiTokensFor } from "@/lib/auth/api-sign-in";

export const dynamic = "force-dynamic";

/**
 * An API client's device confirmation: `{ confirmation_token, code }` after the password step
 * answered 401 `device_confirmation_required` (for a right password from a new device of an
 * account under attack, and alike for a wrong one). The per-address limit (before the body), one
 * parse of the JSON body, then passSecondStep (the pending sign-in of this token, API-only and
 * counted; the code mailed to the owner, good once), then the token pair and the `device_token`
 * that makes this app a known device: no access or refresh token exists before this answer.
 */
export const POST = limited("/api/v1/authentication/token/confirm-device", async (request, limits) => {
  const { gate, client } = limits;
  const body = await readJson(request, gate.config.http.maxBodyBytes);
  if (!body.ok) return body.response;
  const input = apiDeviceConfirmationSchema.safeParse(body.value);
  if (!input.success) return answerRefused(input.error);
  const passed = await passSecondStep(limits, input.data.confirmationToken, "api", { code: input.data.code }, null, [
    "device_confirmation",
  ]);
  if (!passed.ok) return passed.refusal;
  return apiTokensFor(gate, request, client, passed.finished, false);
});

import { z } from "zod";
import { fieldErrors, signInSchema } from "@/lib/auth/credentials";
import { verifyAltcha } from "@/lib/captcha/altcha";
import { readJson } from "@/lib/http/body";
import { limited } from "@/lib/http/limited";
import { captchaInvalid } from "@/lib/http/refusals";
import { json, jsonError } from "@/lib/http/responses";
import { logSecurity } from "@/lib/log/security-log";
import { RESET_REQUESTED } from "@/lib/recovery/answers";
import { CHECK_HIGHLIGHTED_FIELDS } from "@/lib/ui/messages";

export const dynamic = "force-dynamic";

const forgotSchema = z.object({ email: signInSchema.shape.email, altcha: signInSchema.shape.altcha });

/**
 * "Forgot password?": per-address limit (the wrapper), the body, the per-address-and-username
 * limit, ALTCHA, then the same 202 for every address. The account lookup, the link and the email
 * happen after the answer (lib/recovery), so neither the answer nor its timing depends on them.
 */
export const POST = limited("/api/password/forgot", async (request, limits) => {
  const { gate, client } = limits;
  const body = await readJson(request, gate.config.MAX_BODY_BYTES);
  if (!body.ok) return body.response;
  const input = forgotSchema.safeParse(body.value);
  if (!input.success) return jsonError(400, "invalid_input", CHECK_HIGHLIGHTED_FIELDS, { fields: fieldErrors(input.error) });
  const { email, altcha } = input.data;

  const byUsername = await limits.limit("addressAndUsername", email);
  if (byUsername) return byUsername;

  const captcha = await verifyAltcha(altcha, gate.altcha, gate.replays, gate.clock());
  if (!captcha.ok) {
    logSecurity(gate, { route: "/api/password/forgot", outcome: "captcha_invalid", client, email, detail: captcha.reason });
    return captchaInvalid(captcha);
  }

  gate.recovery.resetRequested(email);
  return json(202, RESET_REQUESTED);
});

import { fieldErrors, registrationSchema } from "@/lib/auth/credentials";
import { withinHashBudget } from "@/lib/auth/sign-in";
import { verifyAltcha } from "@/lib/captcha/altcha";
import { readJson } from "@/lib/http/body";
import { limited } from "@/lib/http/limited";
import { busy, captchaInvalid } from "@/lib/http/refusals";
import { json, jsonError } from "@/lib/http/responses";
import { log } from "@/lib/log/logger";
import { logSecurity } from "@/lib/log/security-log";
import { registerAccount } from "@/lib/users/accounts";

export const dynamic = "force-dynamic";

/** Registration: per-address limit (the wrapper, before the body), validation, ALTCHA, hash budget, Argon2id. */
export const POST = limited("/api/register", async (request, { gate, client }) => {
  const body = await readJson(request, gate.config.MAX_BODY_BYTES);
  if (!body.ok) return body.response;
  // Validated before any hashing: a 10,000-character password costs nothing.
  const input = registrationSchema.safeParse(body.value);
  if (!input.success) {
    return jsonError(400, "invalid_input", "Check the highlighted fields.", { fields: fieldErrors(input.error) });
  }

  const captcha = await verifyAltcha(input.data.altcha, gate.altcha, gate.replays, gate.clock());
  if (!captcha.ok) {
    logSecurity(gate, { route: "/api/register", outcome: "captcha_invalid", client, email: input.data.email, detail: captcha.reason });
    return captchaInvalid(captcha);
  }

  return withinHashBudget(
    gate,
    async () => {
      const result = await registerAccount(gate.prisma, input.data, gate.argon2);
      if (!result.ok) return jsonError(409, "email_taken", "An account with this email already exists.");
      log().info({ event: "account_registered", userId: result.user.id });
      return json(201, { id: result.user.id, email: result.user.email });
    },
    () => {
      logSecurity(gate, { route: "/api/register", outcome: "busy", client, email: input.data.email });
      return busy();
    },
  );
});

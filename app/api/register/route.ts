import { fieldErrors, registrationSchema } from "@/lib/auth/credentials";
import { breachedProblem } from "@/lib/auth/new-password";
import { verifyAltcha } from "@/lib/captcha/altcha";
import { levelDue } from "@/lib/captcha/difficulty";
import { readJson } from "@/lib/http/body";
import { limited } from "@/lib/auth/limited";
import { busy, captchaInvalid } from "@/lib/http/refusals";
import { json, jsonError } from "@/lib/http/responses";
import { logSecurity } from "@/lib/auth/security-log";
import { REGISTRATION_ACCEPTED } from "@/lib/auth/email-request";
import { registerAccount } from "@/lib/users/accounts";
import { CHECK_HIGHLIGHTED_FIELDS } from "@/lib/ui/messages";

export const dynamic = "force-dynamic";

/**
 * Registration: per-address limit (the wrapper, before the body), validation and the password
 * rules, ALTCHA, the breach corpus (fail-open), hash budget, Argon2id. A new address and a taken one get the same 202 after the same work (the
 * hash is made before the insert); what differs happens afterwards, by email, to the address's
 * owner: a verification link, or "someone tried to create an account with your address".
 */
export const POST = limited("/api/register", async (request, { gate, client }) => {
  const body = await readJson(request, gate.config.http.maxBodyBytes);
  if (!body.ok) return body.response;
  // Validated before any hashing: a 10,000-character password costs nothing.
  const input = registrationSchema.safeParse(body.value);
  if (!input.success) {
    return jsonError(400, "invalid_input", CHECK_HIGHLIGHTED_FIELDS, { fields: fieldErrors(input.error) });
  }

  // Registration runs Argon2id too: the budget's pressure level is owed here as at sign-in.
  const due = levelDue({ budgetPressure: gate.hashBudget.recentPressure(), addressFailures: 0, knownDevice: false });
  const captcha = await verifyAltcha(input.data.altcha, gate.config.altcha, gate.replays, gate.clock(), due);
  if (!captcha.ok) {
    logSecurity(gate, { route: "/api/register", outcome: "captcha_invalid", client, email: input.data.email, detail: captcha.reason });
    return captchaInvalid(captcha);
  }
  // After the proof of work, so the corpus is asked only for requests that paid for it; the same
  // answer for a new and a taken address (it depends on the password alone).
  const breached = await breachedProblem(gate, input.data.password);
  if (breached) return jsonError(400, "invalid_input", breached.message, { fields: { password: breached.message } });

  return gate.hashBudget.run(
    async () => {
      const verified = !gate.config.email.requireVerification;
      // The account keeps the language it was created in: its mails use it.
      const account = { ...input.data, locale: gate.i18n.localeOf(request.headers) };
      const result = await registerAccount(gate.prisma, account, gate.hasher, verified ? gate.clock() : null);
      if (result.ok) {
        gate.log.info({ event: "account_registered", userId: result.user.id });
        // Counted as verified already: a link would only ever answer invalid_token.
        if (!verified) await gate.recovery.accountCreated(result.user);
      } else {
        gate.log.info({ event: "registration_for_taken_address" });
        await gate.recovery.addressTaken(input.data.email);
      }
      return json(202, REGISTRATION_ACCEPTED);
    },
    () => {
      logSecurity(gate, { route: "/api/register", outcome: "busy", client, email: input.data.email });
      return busy();
    },
  );
});

import { z } from "zod";
import type { Gatehouse } from "@/lib/app";
import { fieldErrors, newEmailField, signInSchema } from "@/lib/auth/credentials";
import { verifyAltcha } from "@/lib/captcha/altcha";
import { readJson } from "@/lib/http/body";
import { limited, type RouteLimits } from "@/lib/auth/limited";
import { captchaInvalid } from "@/lib/http/refusals";
import { json, jsonError } from "@/lib/http/responses";
import type { RoutePath } from "@/lib/http/route-policies";
import { logSecurity } from "@/lib/auth/security-log";
import {
  CHECK_HIGHLIGHTED_FIELDS,
  REGISTRATION_CHECK_EMAIL,
  RESET_CHECK_EMAIL,
  UNLOCK_CHECK_EMAIL,
  VERIFICATION_CHECK_EMAIL,
} from "@/lib/ui/messages";

const emailRequestSchema = z.object({ email: signInSchema.shape.email, altcha: signInSchema.shape.altcha });
/** An address that is to become an account's: a malformed one is refused, as registration refuses it. */
const newAddressRequestSchema = z.object({ email: newEmailField, altcha: signInSchema.shape.altcha });

/**
 * "Email me a link" (a password reset, a new confirmation link, a new unlock link): per-address
 * limit (the wrapper), the body, the per-address-and-username limit, ALTCHA, then `answer`, the
 * same 202 for every address. `start` writes the promise of a mail and queues the work (lib/recovery): the
 * account lookup, the link and the email happen after the answer, so neither the answer nor its timing depends
 * on whether the address has an account.
 */
export function emailRequestRoute(
  path: RoutePath,
  answer: Readonly<{ status: string; message: string }>,
  start: (gate: Gatehouse, email: string, limits: RouteLimits) => Promise<void>,
  /** `new`: the address is to be an account's (registration's checks); `existing`: any address a sign-in takes. */
  address: "new" | "existing" = "existing",
) {
  return limited(path, async (request, limits) => {
    const { gate, client } = limits;
    const body = await readJson(request, gate.config.http.maxBodyBytes);
    if (!body.ok) return body.response;
    const input = (address === "new" ? newAddressRequestSchema : emailRequestSchema).safeParse(body.value);
    if (!input.success) return jsonError(400, "invalid_input", CHECK_HIGHLIGHTED_FIELDS, { fields: fieldErrors(input.error) });
    const { email, altcha } = input.data;

    const byUsername = await limits.limit("addressAndUsername", email);
    if (byUsername) return byUsername;

    const captcha = await verifyAltcha(altcha, gate.config.altcha, gate.replays, gate.clock());
    if (!captcha.ok) {
      logSecurity(gate, { route: path, outcome: "captcha_invalid", client, email, detail: captcha.reason });
      return captchaInvalid(captcha);
    }

    // Awaited: the promise of a mail is in the spool before the answer says it was sent.
    await start(gate, email, limits);
    return json(202, answer);
  });
}

/**
 * The answers that must be the same whether or not an address has an account: one constant
 * each, so no branch can drift from the other.
 */
const checkEmail = (message: string) => Object.freeze({ status: "check_email", message });

export const REGISTRATION_ACCEPTED = checkEmail(REGISTRATION_CHECK_EMAIL);
export const RESET_REQUESTED = checkEmail(RESET_CHECK_EMAIL);
export const VERIFICATION_REQUESTED = checkEmail(VERIFICATION_CHECK_EMAIL);
export const UNLOCK_REQUESTED = checkEmail(UNLOCK_CHECK_EMAIL);

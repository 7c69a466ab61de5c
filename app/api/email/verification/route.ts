import { VERIFICATION_REQUESTED } from "@/lib/auth/email-request";
import { emailRequestRoute } from "@/lib/auth/email-request";

export const dynamic = "force-dynamic";

/**
 * "Send it again" on the check-your-email page: a new confirmation link for an account with this
 * address that is not confirmed yet, nothing for any other, the same 202 for every address.
 */
export const POST = emailRequestRoute("/api/email/verification", VERIFICATION_REQUESTED, (gate, email) =>
  gate.recovery.verificationRequested(email),
);

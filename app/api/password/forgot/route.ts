import { RESET_REQUESTED } from "@/lib/auth/email-request";
import { emailRequestRoute } from "@/lib/auth/email-request";

export const dynamic = "force-dynamic";

/** "Forgot password?": a reset link for an account with this address, the same 202 for every address. */
export const POST = emailRequestRoute("/api/password/forgot", RESET_REQUESTED, (gate, email) => gate.recovery.resetRequested(email));

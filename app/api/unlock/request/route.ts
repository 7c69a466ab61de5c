import { truncateAddress } from "@/lib/events/security-events";
import { UNLOCK_REQUESTED } from "@/lib/auth/email-request";
import { emailRequestRoute } from "@/lib/auth/email-request";
import { browserLabel } from "@/lib/sessions/browser-label";

export const dynamic = "force-dynamic";

/**
 * "Email me a new link" on the lock banner: a new unlock link for an account with this address
 * whose sign-in is paused right now (locked, or failures within the per-username limit's window),
 * under the recovery mails' per-account quota, as many as this route lets one address ask for;
 * nothing for any other address, the same 202 for every address.
 */
export const POST = emailRequestRoute("/api/unlock/request", UNLOCK_REQUESTED, (gate, email, { client, userAgent }) =>
  gate.recovery.unlockRequested(email, { browser: browserLabel(userAgent), address: truncateAddress(client.address), atMs: gate.clock() }),
);

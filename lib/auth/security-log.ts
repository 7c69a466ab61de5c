import type { Gatehouse } from "@/lib/app";
import type { ClientAddress } from "@/lib/http/client-address";
import { digestKey } from "@/lib/rate-limit/limiter";
import { truncateAddress } from "@/lib/events/security-events";

/** What happened to a request at a protection layer, or how its password check ended. */
export type SecurityOutcome =
  | "rate_limited"
  | "captcha_invalid"
  | "locked"
  | "busy"
  | "unavailable"
  | "sign_in_failed"
  | "sign_in_succeeded"
  | "second_step_due"
  | "second_step_invalid"
  | "device_confirmation_due"
  | "mailbox_proved";

export type SecurityLogEntry = {
  route: string;
  outcome: SecurityOutcome;
  client: ClientAddress;
  /** The normalised username, when the layer knew it: logged only as its lockout key. */
  email?: string;
  policy?: string;
  /** A finer reason (the ALTCHA failure, the lane that was refused). */
  detail?: string;
  userId?: string;
};

/**
 * One line per refusal and per sign-in outcome, at info, and one count in the metrics. The address and the username appear
 * only as HMAC keys under the limiter's secret, which every instance shares: one attacker can
 * be followed across instances and days, and the log holds no address or email in clear.
 * (Repeats the server.mjs fast path answers are not logged: the refusal that armed it was.)
 */
export function logSecurity(gate: Gatehouse, entry: SecurityLogEntry): void {
  const { route, outcome, client, email, policy, detail, userId } = entry;
  gate.metrics.outcomes.inc({ route, outcome, policy: policy ?? "" });
  // The per-address sign-in budget spent: that network is under attack (announced once a window, off the request).
  if (outcome === "rate_limited" && policy === "signInAddress" && gate.addressWatch)
    gate.addressWatch.refused(truncateAddress(client.address), gate.clock());
  gate.digestTally?.record(route, outcome, client.source === "unknown" || client.source === "malformed" ? null : client.address);
  gate.log.info({
    event: "security",
    route,
    outcome,
    ...(policy ? { policy } : {}),
    ...(detail ? { detail } : {}),
    ...(userId ? { userId } : {}),
    addressKey: addressLogKey(gate, client),
    ...(email ? { usernameKey: gate.usernameKey(email) } : {}),
  });
}

function addressLogKey(gate: Gatehouse, client: ClientAddress): string {
  // A malformed hop's key is the one bucket they all share: its digest would name no client.
  if (client.source === "unknown" || client.source === "malformed") return client.source;
  return digestKey(gate.config.rateLimit.keySecret, ["log-address", client.key]);
}

import type { LiveSession } from "@/lib/auth/browser-session";
import { noticeOrigin } from "@/lib/auth/complete-sign-in";
import type { RouteLimits } from "@/lib/auth/limited";
import { browserLabel } from "@/lib/sessions/browser-label";
import { endRememberedBrowsers } from "./remembered-browsers";

const WHAT = { totp: "An authenticator app", passkey: "A passkey" } as const;
const EVENTS = {
  on: { totp: "totp_added", passkey: "passkey_second_factor_on" },
  off: { totp: "totp_removed", passkey: "passkey_second_factor_off" },
} as const;

/**
 * A second step turned on, from the account page: recorded, mailed, and, when the account has no
 * recovery codes yet, ten new ones to show once (a factor without a way back would lock out an
 * owner who loses a phone).
 */
export async function factorTurnedOn(limits: RouteLimits, session: LiveSession, kind: keyof typeof WHAT): Promise<string[] | null> {
  const { gate, client } = limits;
  const { recoveryCodesLeft } = await gate.factors.summary(session.userId);
  const codes = recoveryCodesLeft === 0 ? await gate.factors.replaceRecoveryCodes(session.userId, gate.clock()) : null;
  // A remembered browser skipped the step as it was; a new factor is asked of every browser once.
  await endRememberedBrowsers(gate, session.userId);
  await gate.events.accountChanged(session.userId, EVENTS.on[kind], client, {
    browser: browserLabel(limits.userAgent),
    sessionId: session.sid,
  });
  void gate.recovery.notice("factor_added", { id: session.userId }, noticeOrigin(gate, limits), WHAT[kind]);
  gate.log.info({ event: EVENTS.on[kind], userId: session.userId, recoveryCodesIssued: codes !== null });
  return codes;
}

/** A second step turned off: recorded and mailed; with no second step left, the recovery codes go too. */
export async function factorTurnedOff(limits: RouteLimits, session: LiveSession, kind: keyof typeof WHAT): Promise<void> {
  const { gate, client } = limits;
  if (!(await gate.factors.summary(session.userId)).due) await gate.factors.removeRecoveryCodes(session.userId);
  await endRememberedBrowsers(gate, session.userId);
  await gate.events.accountChanged(session.userId, EVENTS.off[kind], client, {
    browser: browserLabel(limits.userAgent),
    sessionId: session.sid,
  });
  void gate.recovery.notice("factor_removed", { id: session.userId }, noticeOrigin(gate, limits), WHAT[kind]);
  gate.log.info({ event: EVENTS.off[kind], userId: session.userId });
}

import { signOutEverywhere } from "@/lib/auth/browser-session";
import { addressTaken, readLinkToken } from "@/lib/auth/email-change-links";
import { limited } from "@/lib/auth/limited";
import { invalidLink } from "@/lib/auth/link-requests";
import { json } from "@/lib/http/responses";
import { browserLabel } from "@/lib/sessions/browser-label";
import { undoEmailChange } from "@/lib/users/email-change";

export const dynamic = "force-dynamic";

/**
 * The old address's "Undo the change", from the mail it got at once (7 days): the account keeps or
 * gets back the old address, and whoever asked for the change is shut out. Every session and token
 * ends (the generation is raised), the devices known to the account are forgotten (one is the
 * intruder's), the username is marked under attack (a new device confirms by email, to this
 * mailbox), and a reset link is mailed to it: whoever changed the address knew the password.
 */
export const POST = limited("/api/email-change/undo", async (request, limits) => {
  const { gate, client } = limits;
  const link = await readLinkToken(request, gate);
  if (!link.ok) return link.response;
  const undone = await undoEmailChange(gate.prisma, link.token, gate.usernameKey, gate.clock());
  if (!undone.ok) {
    gate.log.info({ event: "email_change_undo_refused", reason: undone.reason });
    return undone.reason === "taken" ? addressTaken() : invalidLink();
  }
  const { userId, to, restored } = undone;
  const nowMs = gate.clock();
  const ended = await signOutEverywhere(gate, userId, null, nowMs);
  const usernameKey = gate.usernameKey(to);
  const devicesForgotten = await gate.devices.forgetAll(usernameKey);
  await gate.lockouts.markUnderAttack(usernameKey, nowMs);
  await gate.events.accountChanged(userId, "email_change_undone", client, { browser: browserLabel(limits.userAgent) });
  await gate.recovery.resetRequested(to);
  gate.log.info({ event: "email_change_undone", userId, restored, devicesForgotten, ...ended });
  return json(200, { status: "email_change_undone", email: to });
});

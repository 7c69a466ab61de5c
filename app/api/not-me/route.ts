import { readLinkToken } from "@/lib/auth/email-change-links";
import { limited } from "@/lib/auth/limited";
import { invalidLink } from "@/lib/auth/link-requests";
import { json } from "@/lib/http/responses";
import { browserLabel } from "@/lib/sessions/browser-label";
import { endSessionNotMe } from "@/lib/users/not-me";

export const dynamic = "force-dynamic";

/**
 * "This wasn't me", pressed on the page the new-device mail's link opens: that sign-in's session
 * (or the app's token family) ends at once and its device is forgotten (lib/users/not-me.ts), the
 * username is marked under attack (a new device confirms by email, to the owner's mailbox), and
 * the page offers the reset. The answer names nothing about the account: a good link says it is
 * done, any other is the one "invalid link".
 */
export const POST = limited("/api/not-me", async (request, limits) => {
  const { gate, client } = limits;
  const link = await readLinkToken(request, gate);
  if (!link.ok) return link.response;
  const nowMs = gate.clock();
  const ended = await endSessionNotMe(gate.prisma, link.token, gate.usernameKey, nowMs);
  if (!ended) return invalidLink();
  const { userId, email, ...counts } = ended;
  await gate.lockouts.markUnderAttack(gate.usernameKey(email), nowMs);
  await gate.events.accountChanged(userId, "session_ended_not_me", client, { browser: browserLabel(limits.userAgent) });
  gate.log.info({ event: "session_ended_not_me", userId, ...counts });
  return json(200, { status: "session_ended" });
});

import { truncateAddress } from "@/lib/events/security-events";
import { setDeviceCookie } from "@/lib/http/cookies";
import { limited } from "@/lib/auth/limited";
import { json } from "@/lib/http/responses";
import { invalidLink, linkSchema, readLinkRequest } from "@/lib/auth/link-requests";
import { browserLabel } from "@/lib/sessions/browser-label";
import { writeGuarded } from "@/lib/db/one-statement";
import { credentialsUnchanged } from "@/lib/users/accounts";

export const dynamic = "force-dynamic";

const unlockSchema = linkSchema({});

/**
 * The owner's way past a lock that strangers caused: the emailed link makes this browser a known
 * device of the account (an OWASP device cookie), which the strangers' lock does not refuse, and
 * ends "under attack", so the owner's other new devices need no mailed code. It signs nobody in:
 * the password is still typed, and checked, on the sign-in page. The device is written only while
 * the account is under the credentials the link was issued for.
 */
export const POST = limited("/api/unlock", async (request, limits) => {
  const { gate, client } = limits;
  const link = await readLinkRequest(request, gate, "unlock", unlockSchema);
  if (!link.ok) return link.response;
  const nowMs = gate.clock();
  if (!(await gate.emailTokens.use(link.token.id, nowMs))) return invalidLink();
  const { writes, device } = gate.devices.issuing(gate.usernameKey(link.token.email), nowMs, undefined, {
    label: browserLabel(limits.userAgent),
    address: truncateAddress(client.address),
  });
  // Only under the credentials the link was issued for: a reset or revocation since it was checked
  // forgets every device, and this one must not come after it.
  const account = { id: link.token.userId, credentialGeneration: link.token.credentialGeneration };
  if (!(await writeGuarded(gate.sql, credentialsUnchanged(account), writes))) return invalidLink();
  // Proof of the mailbox ends "under attack" for the owner's next new device (invariant 11). The
  // strangers' count and lock stay: this browser has its own lane, and the link signs nobody in.
  await gate.lockouts.clearUnderAttack(gate.usernameKey(link.token.email));
  await gate.events.accountChanged(link.token.userId, "unlock_link_used", client, { browser: browserLabel(limits.userAgent) });
  gate.log.info({ event: "unlock_link_used", userId: link.token.userId });
  const response = json(200, {
    status: "unlocked",
    message: "This browser can sign in to your account now. Enter your password to continue.",
    email: link.token.email,
  });
  return setDeviceCookie(response, gate.config, device.token, device.expiresAtMs, nowMs);
});

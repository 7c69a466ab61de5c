import { z } from "zod";
import { backToAccount, readAccountForm } from "@/lib/auth/account-form";
import { fieldErrors } from "@/lib/auth/credentials";
import { freshAuthenticationRefusal } from "@/lib/auth/fresh-authentication";
import { limited } from "@/lib/auth/limited";
import { deviceTokenOf, setDeviceCookie } from "@/lib/http/cookies";
import { json, jsonError } from "@/lib/http/responses";
import { browserLabel } from "@/lib/sessions/browser-label";

export const dynamic = "force-dynamic";

// A device id is 16 random bytes in base64url (lib/devices/device-token.ts).
const forgetSchema = z.object({ id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/) });

/**
 * "Forget device": the owner takes one known device out of their lane at once (its row goes, so
 * its cookie verifies nowhere: the door, the lockout, the hash budget). It weakens how the
 * account is protected for that device, so it needs a fresh authentication, as "sign out
 * everywhere else" does. Another account's device, or one already forgotten, changes nothing.
 */
export const POST = limited("/api/account/devices/forget", async (request, limits) => {
  const { gate, client } = limits;
  const form = await readAccountForm(request, gate, (session) => limits.limit("user", session.userId));
  if (!form.ok) return form.response;
  const input = forgetSchema.safeParse(form.fields);
  if (!input.success)
    return jsonError(400, "invalid_input", "Reload the account page and try again.", { fields: fieldErrors(input.error) });
  const { userId, sid } = form.session;
  const answer = form.fields.json === "true" ? "json" : "redirect";
  const stale = await freshAuthenticationRefusal(gate, form.session, answer);
  if (stale) return stale;

  const account = await gate.prisma.user.findUnique({ where: { id: userId }, select: { email: true } });
  const usernameKey = gate.usernameKey(account?.email ?? "");
  const nowMs = gate.clock();
  if (!account || !(await gate.devices.forgetOwn(input.data.id, usernameKey)))
    return jsonError(404, "not_found", "That device is not on your account (it may be forgotten already).");
  await gate.events.accountChanged(userId, "device_forgotten", client, { browser: browserLabel(limits.userAgent), sessionId: sid });
  gate.log.info({ event: "device_forgotten", userId });
  const response = answer === "json" ? json(200, { status: "device_forgotten" }) : backToAccount("device_forgotten");
  // This very browser forgotten: its cookie goes too, as the row did.
  const own = gate.devices.signed(deviceTokenOf(request, gate.config), usernameKey, nowMs);
  return own?.id === input.data.id ? setDeviceCookie(response, gate.config, "", nowMs, nowMs) : response;
});

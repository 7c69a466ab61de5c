import { z } from "zod";
import { readAccountForm } from "@/lib/auth/account-form";
import { fieldErrors, newEmailField } from "@/lib/auth/credentials";
import { freshAuthenticationRefusal } from "@/lib/auth/fresh-authentication";
import { limited } from "@/lib/auth/limited";
import { noticeOrigin } from "@/lib/auth/complete-sign-in";
import { json, jsonError } from "@/lib/http/responses";
import { browserLabel } from "@/lib/sessions/browser-label";

export const dynamic = "force-dynamic";

const changeSchema = z.object({ newEmail: newEmailField });

const SAME = "That is already your account's email address.";

/**
 * "Change email": the new address gets a link that confirms it, the old one is told at once with a
 * link that undoes it (lib/recovery/recovery.ts). Nothing changes here: the account moves when the
 * link is confirmed. A fresh authentication first (its sign-in or "Confirm it's you" passed the
 * second step where the account has one), then the per-account and per-address limits. An address
 * that belongs to another account gets the same answer, at the same time, as a free one: the work
 * that differs runs in the background.
 */
export const POST = limited("/api/account/email", async (request, limits) => {
  const { gate, client } = limits;
  const form = await readAccountForm(request, gate);
  if (!form.ok) return form.response;
  const input = changeSchema.safeParse({ newEmail: form.fields.newEmail });
  if (!input.success) return jsonError(400, "invalid_input", "Enter a valid email address.", { fields: fieldErrors(input.error) });
  const { userId, sid } = form.session;
  const stale = await freshAuthenticationRefusal(gate, form.session, form.fields.json === "true" ? "json" : "redirect");
  if (stale) {
    limits.notApplied("user");
    limits.notApplied("email");
    return stale;
  }
  const newEmail = input.data.newEmail;
  const refused = (await limits.limit("user", userId)) ?? (await limits.limit("email", gate.usernameKey(newEmail)));
  if (refused) return refused;
  const account = await gate.prisma.user.findUnique({ where: { id: userId }, select: { email: true } });
  if (!account) return jsonError(404, "not_found", "That account no longer exists.");
  if (account.email === newEmail) return jsonError(400, "invalid_input", SAME, { fields: { newEmail: SAME } });

  gate.recovery.emailChangeRequested(userId, newEmail, sid, noticeOrigin(gate, limits));
  await gate.events.accountChanged(userId, "email_change_requested", client, { browser: browserLabel(limits.userAgent), sessionId: sid });
  gate.log.info({ event: "email_change_requested", userId });
  return form.fields.json === "true"
    ? json(202, { status: "check_new_inbox" })
    : new Response(null, { status: 303, headers: { Location: "/account?notice=email_change_sent", "Cache-Control": "no-store" } });
});

import { z } from "zod";
import { readAccountForm } from "@/lib/auth/account-form";
import { fieldErrors, normalizeEmail } from "@/lib/auth/credentials";
import { freshAuthenticationRefusal } from "@/lib/auth/fresh-authentication";
import { limited } from "@/lib/auth/limited";
import { clearedSessionCookie } from "@/lib/auth/next-auth/session-cookie";
import { noticeOrigin } from "@/lib/auth/complete-sign-in";
import { setDeviceCookie } from "@/lib/http/cookies";
import { json, jsonError } from "@/lib/http/responses";
import { deleteAccount } from "@/lib/users/delete-account";
import { queueWebhook } from "@/lib/webhooks/events";

export const dynamic = "force-dynamic";

const deleteSchema = z.object({ confirm: z.string().max(320) });

const MISMATCH = "Type the email address of your account exactly to confirm.";

/**
 * "Delete account": the owner's own deletion (GDPR article 17). Three proofs, in order: the
 * account's address typed as the explicit confirmation, then a fresh authentication (whose sign-in
 * or "Confirm it's you" passed the second step where the account has one). Then every row about
 * the account goes in one transaction, the goodbye is mailed to the address it had, and this
 * browser's cookies are cleared; every other session and token dies with its row, on every instance.
 */
export const POST = limited("/api/account/delete", async (request, limits) => {
  const { gate } = limits;
  const form = await readAccountForm(request, gate, (session) => limits.limit("user", session.userId));
  if (!form.ok) return form.response;
  const input = deleteSchema.safeParse(form.fields);
  if (!input.success) return jsonError(400, "invalid_input", MISMATCH, { fields: fieldErrors(input.error) });
  const { userId } = form.session;
  const account = await gate.prisma.user.findUnique({ where: { id: userId }, select: { email: true } });
  if (!account) return jsonError(404, "not_found", "That account no longer exists.");
  if (normalizeEmail(input.data.confirm) !== account.email)
    return jsonError(400, "invalid_input", MISMATCH, { fields: { confirm: MISMATCH } });
  const answer = form.fields.json === "true" ? "json" : "redirect";
  const stale = await freshAuthenticationRefusal(gate, form.session, answer);
  if (stale) return stale;

  const goodbye = await gate.recovery.farewell(userId);
  const usernameKey = gate.usernameKey(account.email);
  const deleted = await deleteAccount(gate.prisma, userId, usernameKey);
  // A parallel request deleted it first: that one says goodbye.
  if (!deleted) return jsonError(404, "not_found", "That account no longer exists.");
  await goodbye?.(noticeOrigin(gate, limits));
  // No account is left to hold a security event: the log line is the record (no address in it), and
  // the client's systems are told, as of an operator's deletion.
  gate.log.info({ event: "account_deleted_by_owner", userId, usernameKey, ...deleted });
  if (gate.config.webhooks)
    await queueWebhook(gate.sql, { type: "account.deleted", atMs: gate.clock(), data: { account: userId, change: "owner_deleted" } });
  const nowMs = gate.clock();
  const response =
    answer === "json"
      ? json(200, { status: "account_deleted" })
      : new Response(null, { status: 303, headers: { Location: "/?notice=account_deleted", "Cache-Control": "no-store" } });
  response.headers.append("Set-Cookie", clearedSessionCookie(gate.config));
  return setDeviceCookie(response, gate.config, "", nowMs, nowMs);
});

import { z } from "zod";
import { backToAccount, readAccountForm } from "@/lib/auth/account-form";
import { fieldErrors } from "@/lib/auth/credentials";
import { limited } from "@/lib/auth/limited";
import { jsonError } from "@/lib/http/responses";
import { revokeUserFamily } from "@/lib/tokens/refresh-tokens";
import { browserLabel } from "@/lib/sessions/browser-label";
import { uuidSchema } from "@/lib/tokens/opaque-token";

export const dynamic = "force-dynamic";

const revokeSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("browser"), id: z.string().min(1).max(64) }),
  z.object({ kind: z.literal("api"), id: uuidSchema }),
]);

/**
 * Ends one of the owner's sessions from the account page: a browser session (its next request
 * is signed out) or an API session (its refresh family is revoked). Another user's id, or one
 * already ended, changes nothing and says so.
 */
export const POST = limited("/api/account/sessions/revoke", async (request, limits) => {
  const { gate, client } = limits;
  const form = await readAccountForm(request, gate, (session) => limits.limit("user", session.userId));
  if (!form.ok) return form.response;
  const input = revokeSchema.safeParse(form.fields);
  if (!input.success)
    return jsonError(400, "invalid_input", "Reload the account page and try again.", { fields: fieldErrors(input.error) });

  const { userId, sid } = form.session;
  const nowMs = gate.clock();
  const ended =
    input.data.kind === "browser"
      ? await gate.sessions.revoke(userId, input.data.id, nowMs)
      : (await revokeUserFamily(gate.prisma, userId, input.data.id, nowMs)) > 0;
  if (!ended) return backToAccount("already_ended");
  await gate.events.accountChanged(userId, input.data.kind === "browser" ? "browser_session_revoked" : "api_session_revoked", client, {
    browser: browserLabel(limits.userAgent),
    sessionId: sid,
  });
  gate.log.info({ event: "session_revoked_by_owner", userId, kind: input.data.kind });
  return backToAccount(input.data.kind === "browser" ? "browser_session_revoked" : "api_session_revoked");
});

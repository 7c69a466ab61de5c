import { backToAccount, readAccountForm } from "@/lib/auth/account-form";
import { signOutEverywhere } from "@/lib/auth/browser-session";
import { freshAuthenticationRefusal } from "@/lib/auth/fresh-authentication";
import { limited } from "@/lib/auth/limited";
import { browserLabel } from "@/lib/sessions/browser-label";

export const dynamic = "force-dynamic";

/** "Sign out everywhere else": every other browser session and every API session, at once. */
export const POST = limited("/api/account/sessions/revoke-others", async (request, limits) => {
  const { gate, client } = limits;
  const form = await readAccountForm(request, gate, (session) => limits.limit("user", session.userId));
  if (!form.ok) return form.response;
  const { userId, sid } = form.session;
  const stale = await freshAuthenticationRefusal(gate, form.session, form.fields.json === "true" ? "json" : "redirect");
  if (stale) return stale;
  const ended = await signOutEverywhere(gate, userId, sid, gate.clock());
  await gate.events.accountChanged(userId, "signed_out_everywhere_else", client, {
    browser: browserLabel(limits.userAgent),
    sessionId: sid,
  });
  gate.log.info({ event: "signed_out_everywhere_else", userId, ...ended });
  return backToAccount("signed_out_everywhere_else");
});

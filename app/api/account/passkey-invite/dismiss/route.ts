import { backToAccount, readAccountForm } from "@/lib/auth/account-form";
import { limited } from "@/lib/auth/limited";
import { json } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

/**
 * "Don't ask again" on the invitation to add a passkey: stored on the account, so no browser of it
 * is asked again. It weakens nothing (the invitation protects nothing), so no fresh authentication;
 * a live session and the page's form token, as every account form.
 */
export const POST = limited("/api/account/passkey-invite/dismiss", async (request, limits) => {
  const { gate } = limits;
  const form = await readAccountForm(request, gate, (session) => limits.limit("user", session.userId));
  if (!form.ok) return form.response;
  await gate.prisma.user.updateMany({
    where: { id: form.session.userId, passkeyInviteDismissedAt: null },
    data: { passkeyInviteDismissedAt: new Date(gate.clock()) },
  });
  return form.fields.json === "true" ? json(200, { status: "passkey_invite_dismissed" }) : backToAccount("passkey_invite_dismissed");
});

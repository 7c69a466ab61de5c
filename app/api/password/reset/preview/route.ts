import { limited } from "@/lib/auth/limited";
import { json } from "@/lib/http/responses";
import { linkSchema, readLinkRequest } from "@/lib/auth/link-requests";
import { maskEmail } from "@/lib/ui/mask";
import { hasOtherFactor } from "@/lib/users/accounts";

export const dynamic = "force-dynamic";

const previewSchema = linkSchema({});

/**
 * What the reset page shows before its button is pressed: the account the link is for, masked,
 * and what decides its new password's rule (15 characters, or 8 while another factor stays) and
 * whether "Also remove every passkey" means anything. Only the link's holder learns it (every bad
 * token is the one invalid-link answer), and reading it spends nothing.
 */
export const POST = limited("/api/password/reset/preview", async (request, { gate }) => {
  const link = await readLinkRequest(request, gate, "reset_password", previewSchema);
  if (!link.ok) return link.response;
  const { userId, email } = link.token;
  const [passkeys, otherFactor] = await Promise.all([
    gate.prisma.passkey.count({ where: { userId } }),
    hasOtherFactor(gate.prisma, userId),
  ]);
  return json(200, { account: maskEmail(email), hasPasskey: passkeys > 0, hasOtherFactor: otherFactor });
});

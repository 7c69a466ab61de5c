import { limited } from "@/lib/auth/limited";
import { json } from "@/lib/http/responses";
import { linkSchema, readLinkRequest } from "@/lib/auth/link-requests";
import { maskEmail } from "@/lib/ui/mask";

export const dynamic = "force-dynamic";

const previewSchema = linkSchema({});

/**
 * What the unlock page shows before its button is pressed: the account the link is for, masked.
 * Only the link's holder learns it (every bad token is the one invalid-link answer), and reading
 * it spends nothing, so a mail scanner that opens the page changes nothing either.
 */
export const POST = limited("/api/unlock/preview", async (request, { gate }) => {
  const link = await readLinkRequest(request, gate, "unlock", previewSchema);
  if (!link.ok) return link.response;
  return json(200, { account: maskEmail(link.token.email) });
});

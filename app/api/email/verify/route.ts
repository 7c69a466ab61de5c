import { limited } from "@/lib/http/limited";
import { json } from "@/lib/http/responses";
import { log } from "@/lib/log/logger";
import { invalidLink, linkSchema, readLinkRequest } from "@/lib/recovery/link-requests";
import { browserLabel } from "@/lib/sessions/browser-label";
import { prisma } from "@/lib/db/client";

export const dynamic = "force-dynamic";

const verifySchema = linkSchema({});

/** Confirms an account's address from its emailed link (a POST from the link's page: mail scanners open links). */
export const POST = limited("/api/email/verify", async (request, limits) => {
  const { gate, client } = limits;
  const link = await readLinkRequest(request, gate, "verify_email", verifySchema);
  if (!link.ok) return link.response;
  const nowMs = gate.clock();
  if (!(await gate.emailTokens.use(link.token.id, nowMs))) return invalidLink();
  await (await prisma()).user.updateMany({ where: { id: link.token.userId, emailVerifiedAt: null }, data: { emailVerifiedAt: new Date(nowMs) } });
  await gate.events.accountChanged(link.token.userId, "email_verified", client, { browser: browserLabel(limits.userAgent) });
  log().info({ event: "email_verified", userId: link.token.userId });
  return json(200, { status: "email_verified", message: "Your email address is confirmed. You can sign in now.", email: link.token.email });
});

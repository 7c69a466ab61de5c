import { z } from "zod";
import { limited } from "@/lib/http/limited";
import { busy } from "@/lib/http/refusals";
import { json, jsonError } from "@/lib/http/responses";
import { log } from "@/lib/log/logger";
import { PASSWORD_MAX_LENGTH } from "@/lib/password/rules";
import { invalidLink, linkSchema, readLinkRequest } from "@/lib/recovery/link-requests";
import { browserLabel } from "@/lib/sessions/browser-label";
import { verifyCredentials } from "@/lib/users/accounts";

export const dynamic = "force-dynamic";

const verifySchema = linkSchema({
  password: z
    .string({ error: "Enter the password you chose." })
    .min(1, "Enter the password you chose.")
    .max(PASSWORD_MAX_LENGTH * 4),
});

/**
 * Confirms an account's address from its emailed link (a POST from the link's page: mail scanners
 * open links), with the password the account was registered with. The mailbox alone is not
 * enough: otherwise someone who registered another person's address could have that person
 * confirm an account whose password they chose (account pre-hijacking). A wrong password does
 * not spend the link; the person who registered types it again.
 */
export const POST = limited("/api/email/verify", async (request, limits) => {
  const { gate, client } = limits;
  const link = await readLinkRequest(request, gate, "verify_email", verifySchema);
  if (!link.ok) return link.response;
  const matches = await gate.hashBudget.run(
    async () => (await verifyCredentials(gate.prisma, { email: link.token.email, password: link.fields.password }, gate.argon2)) !== null,
    () => null,
  );
  if (matches === null) return busy();
  if (!matches) {
    const message = "That is not the password this account was created with. If you did not create it, ignore the email.";
    return jsonError(400, "invalid_input", message, { fields: { password: message } });
  }
  const nowMs = gate.clock();
  if (!(await gate.emailTokens.use(link.token.id, nowMs))) return invalidLink();
  await gate.prisma.user.updateMany({
    where: { id: link.token.userId, emailVerifiedAt: null },
    data: { emailVerifiedAt: new Date(nowMs) },
  });
  await gate.events.accountChanged(link.token.userId, "email_verified", client, { browser: browserLabel(limits.userAgent) });
  log().info({ event: "email_verified", userId: link.token.userId });
  return json(200, { status: "email_verified", message: "Your email address is confirmed. You can sign in now.", email: link.token.email });
});

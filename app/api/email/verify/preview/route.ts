import { z } from "zod";
import { limited } from "@/lib/auth/limited";
import { invalidLink } from "@/lib/auth/link-requests";
import { readJson } from "@/lib/http/body";
import { json } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

const previewSchema = z.object({ token: z.string().max(512) });

/**
 * What the confirmation page knows before its button is pressed: whether the link's address is
 * already confirmed (an old email opened again), so the page offers to sign in instead of asking
 * for a password under "expired". `{ confirmed: false }` for a live link; every other token the
 * one invalid-link answer. Only the link's holder learns it, and reading it spends nothing.
 */
export const POST = limited("/api/email/verify/preview", async (request, { gate }) => {
  const body = await readJson(request, gate.config.http.maxBodyBytes);
  if (!body.ok) return body.response;
  const presented = previewSchema.safeParse(body.value);
  if (!presented.success) return invalidLink();
  const { token } = presented.data;
  if (await gate.emailTokens.alreadyConfirmed(token)) return json(200, { confirmed: true });
  return (await gate.emailTokens.find(token, "verify_email", gate.clock())) ? json(200, { confirmed: false }) : invalidLink();
});

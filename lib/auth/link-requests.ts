import { z } from "zod";
import { fieldErrors } from "@/lib/auth/credentials";
import { readJson } from "@/lib/http/body";
import { accept, refuse, type OrRefused } from "@/lib/http/or-refused";
import { jsonError } from "@/lib/http/responses";
import type { Gatehouse } from "@/lib/app";
import type { EmailTokenPurpose, LiveEmailToken } from "@/lib/recovery/email-tokens";
import { CHECK_HIGHLIGHTED_FIELDS, LINK_INVALID } from "@/lib/ui/messages";

// Ours are 43 characters; the bound only keeps a huge string from being hashed. Anything within
// it that is not a live token of ours is the same "invalid link", whatever was wrong with it.
const token = z.string({ error: "The link is incomplete. Open it again from the email." }).max(512);

/** The link's token, read from a JSON body with the route's other fields. */
export function linkSchema<T extends z.ZodRawShape>(fields: T) {
  return z.object({ token, ...fields });
}

export function invalidLink(): Response {
  return jsonError(400, "invalid_token", LINK_INVALID);
}

/**
 * The body of a request that uses an emailed link, and the live token it names: a bad body is a
 * 400 naming the fields, and every bad token (forged, truncated, oversized, expired, used,
 * superseded, older than the password) the one "invalid link" answer.
 */
export async function readLinkRequest<S extends z.ZodType<{ token: string }>>(
  request: Request,
  gate: Gatehouse,
  purpose: EmailTokenPurpose,
  schema: S,
): Promise<OrRefused<{ fields: z.infer<S>; token: LiveEmailToken }>> {
  const body = await readJson(request, gate.config.http.maxBodyBytes);
  if (!body.ok) return body;
  // The link first: a bad one is told as such, whatever else the body holds.
  const presented = z.object({ token }).safeParse(body.value);
  const live = presented.success ? await gate.emailTokens.find(presented.data.token, purpose, gate.clock()) : null;
  if (!live) return refuse(invalidLink());
  const input = schema.safeParse(body.value);
  if (!input.success) return refuse(jsonError(400, "invalid_input", CHECK_HIGHLIGHTED_FIELDS, { fields: fieldErrors(input.error) }));
  return accept({ fields: input.data, token: live });
}

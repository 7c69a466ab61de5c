import { readJson } from "@/lib/http/body";
import { accept, refuse, type OrRefused } from "@/lib/http/or-refused";
import { jsonError } from "@/lib/http/responses";
import type { Gatehouse } from "@/lib/app";
import { invalidLink, linkSchema } from "./link-requests";

/** The token of a link that moves an address (confirm, undo) or ends a session ("This wasn't me"); any bad body is the one "invalid link". */
export async function readLinkToken(request: Request, gate: Gatehouse): Promise<OrRefused<{ token: string }>> {
  const body = await readJson(request, gate.config.http.maxBodyBytes);
  if (!body.ok) return body;
  const input = linkSchema({}).safeParse(body.value);
  return input.success ? accept({ token: input.data.token }) : refuse(invalidLink());
}

export const ADDRESS_TAKEN = "That address belongs to another account now, so the change cannot be made. Nothing changed.";

/** Another account took the address between the request and the link: a clear 409, nothing changed. */
export function addressTaken(): Response {
  return jsonError(409, "address_taken", ADDRESS_TAKEN);
}

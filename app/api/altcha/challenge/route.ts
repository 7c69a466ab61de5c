import { gatehouse } from "@/lib/auth/gatehouse";
import { issueChallenge } from "@/lib/captcha/altcha";
import { rateLimited } from "@/lib/http/refusals";
import { json } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

/** A signed, expiring proof-of-work challenge for the ALTCHA widget. */
export async function GET(request: Request) {
  const gate = await gatehouse();
  const limit = await gate.limiter.consume("altchaChallenge", [gate.clientAddress(request.headers).key]);
  if (!limit.allowed) return rateLimited(limit);
  return json(200, await issueChallenge(gate.altcha, gate.clock()));
}

import { issueChallenge } from "@/lib/captcha/altcha";
import { limited } from "@/lib/http/limited";
import { json } from "@/lib/http/responses";

export const dynamic = "force-dynamic";

/** A signed, expiring proof-of-work challenge for the ALTCHA widget. */
export const GET = limited("/api/altcha/challenge", async (_request, { gate }) => json(200, await issueChallenge(gate.altcha, gate.clock())));

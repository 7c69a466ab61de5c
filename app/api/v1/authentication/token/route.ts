import { authenticate } from "@/lib/auth/authenticate";
import { fieldErrors, signInSchema, type SignInInput } from "@/lib/auth/credentials";
import { gatehouse } from "@/lib/auth/gatehouse";
import { admitSignIn, withinHashBudget, type Admission } from "@/lib/auth/sign-in-gate";
import { prisma } from "@/lib/db/client";
import { readJson } from "@/lib/http/form";
import { apiRateLimited } from "@/lib/http/refusals";
import { json, jsonError } from "@/lib/http/responses";
import { log } from "@/lib/log/logger";
import { issueAccessToken, tokenPair } from "@/lib/tokens/access-token";
import { issueRefreshToken } from "@/lib/tokens/refresh-tokens";

export const dynamic = "force-dynamic";

// The limiter key names the route, not the request URL, so `/token/` or `/TOKEN` cannot get a fresh counter.
const PATH = "/api/v1/authentication/token";

// Word for word what the browser sign-in shows: nothing tells a wrong password from an unknown account.
const INVALID_CREDENTIALS = { error: "invalid_credentials", message: "Incorrect email or password." } as const;

/**
 * Password sign-in for API clients: the browser's pipeline (per-address and per-username limits,
 * ALTCHA, the shared username lockout, the hash budget, Argon2id) behind a sliding-window limit
 * per client address and path. Only JSON is read: a cross-site form cannot send it without a
 * CORS preflight.
 */
export async function POST(request: Request) {
  const gate = await gatehouse();
  const client = gate.clientAddress(request.headers);

  const byPath = await gate.limiter.consume("apiToken", [client.key, PATH]);
  if (!byPath.allowed) return apiRateLimited(byPath);

  const admitted = await admitSignIn(gate, client, async (): Promise<Admission<SignInInput>> => {
    const body = await readJson(request, gate.config.MAX_BODY_BYTES);
    if (!body.ok) return body;
    const input = signInSchema.safeParse(body.value);
    if (!input.success) return { ok: false, response: jsonError(400, "invalid_input", "Enter your email and password.", { fields: fieldErrors(input.error) }) };
    return { ok: true, value: input.data };
  }, apiRateLimited);
  if (!admitted.ok) return admitted.response;

  return withinHashBudget(gate, async () => {
    const user = await authenticate(gate, admitted.value, client);
    if (!user) return json(401, INVALID_CREDENTIALS);

    const nowMs = gate.clock();
    const access = await issueAccessToken(user.id, gate.config.API_TOKEN_SECRET, gate.config.ACCESS_TOKEN_TTL_SECONDS, nowMs);
    const refreshTtlSeconds = gate.config.REFRESH_TOKEN_TTL_DAYS * 86_400;
    const refresh = await issueRefreshToken(await prisma(), user.id, null, refreshTtlSeconds * 1000, nowMs);
    await gate.events.refreshFamilyCreated(user.id, client);
    log().info({ event: "api_tokens_issued", userId: user.id, familyId: refresh.familyId });

    return tokenPair(access.token, refresh.token, gate.config);
  });
}

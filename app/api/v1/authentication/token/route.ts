import { apiSignInSchema, fieldErrors } from "@/lib/auth/credentials";
import { admitSignIn, checkPassword } from "@/lib/auth/sign-in";
import { readJson } from "@/lib/http/body";
import { deviceTokenOf, setDeviceCookie } from "@/lib/http/device-cookie";
import { limited } from "@/lib/http/limited";
import { accept, refuse } from "@/lib/http/refused";
import { json, jsonError } from "@/lib/http/responses";
import { log } from "@/lib/log/logger";
import { tokenPair } from "@/lib/http/token-response";
import { accessSubject, issueAccessToken } from "@/lib/tokens/access-token";
import { issueRefreshToken } from "@/lib/tokens/refresh-tokens";
import { truncateAddress } from "@/lib/events/security-events";
import { apiClientLabel } from "@/lib/sessions/browser-label";
import { ENTER_EMAIL_AND_PASSWORD, INCORRECT_CREDENTIALS } from "@/lib/ui/messages";

export const dynamic = "force-dynamic";

// Word for word what the browser sign-in shows: nothing tells a wrong password from an unknown account.
const INVALID_CREDENTIALS = { error: "invalid_credentials", message: INCORRECT_CREDENTIALS } as const;

/**
 * Password sign-in for API clients: the browser's pipeline (per-address and per-username limits,
 * ALTCHA, the shared username lockout, then checkPassword: the hash budget, the lockout again and
 * Argon2id) behind a sliding-window limit per client address and path. A known device sends the
 * `device_token` from its last sign-in (or the browser's device cookie) and gets a new one. Only JSON is read: a
 * cross-site form cannot send it without a CORS preflight.
 */
export const POST = limited("/api/v1/authentication/token", async (request, limits) => {
  const { gate, client } = limits;
  const admitted = await admitSignIn(limits, async () => {
    const body = await readJson(request, gate.config.MAX_BODY_BYTES);
    if (!body.ok) return body;
    const input = apiSignInSchema.safeParse(body.value);
    if (!input.success) return refuse(jsonError(400, "invalid_input", ENTER_EMAIL_AND_PASSWORD, { fields: fieldErrors(input.error) }));
    // An app keeps its device token in the body; a browser calling the API sends its cookie.
    return accept({ value: { ...input.data, deviceToken: input.data.device_token ?? deviceTokenOf(request) } });
  });
  if (!admitted.ok) return admitted.response;

  const checked = await checkPassword(gate, admitted.admission);
  if (!checked.ok) return checked.refusal ?? json(401, INVALID_CREDENTIALS);
  const { user } = checked;

  const nowMs = gate.clock();
  const refreshTtlSeconds = gate.config.refreshTokenTtlSeconds;
  const refresh = await issueRefreshToken(gate.prisma, user.id, null, refreshTtlSeconds * 1000, nowMs, {
    expiresAtMs: nowMs + gate.config.refreshFamilyLifetimeMs,
    client: apiClientLabel(request.headers.get("user-agent")),
    address: truncateAddress(client.address),
    credentialGeneration: user.credentialGeneration,
  });
  const access = await issueAccessToken(
    accessSubject(user, refresh),
    gate.config.API_TOKEN_SECRET,
    gate.config.ACCESS_TOKEN_TTL_SECONDS,
    nowMs,
  );
  await gate.events.refreshFamilyCreated(user.id, client, { browser: apiClientLabel(request.headers.get("user-agent")) });
  log().info({ event: "api_tokens_issued", userId: user.id, familyId: refresh.familyId });
  const response = tokenPair(access.token, refresh.token, gate.config, { device_token: checked.device.token });
  // A browser that sent its cookie keeps its place in the owner's lane: the old one is now revoked.
  return admitted.value.device_token === undefined && deviceTokenOf(request) !== undefined
    ? setDeviceCookie(response, checked.device.token, checked.device.expiresAtMs, nowMs)
    : response;
});

import { apiSignInSchema, fieldErrors } from "@/lib/auth/credentials";
import { signInWithPassword } from "@/lib/auth/sign-in";
import { readJson } from "@/lib/http/body";
import { deviceTokenOf, setDeviceCookie } from "@/lib/http/device-cookie";
import { limited } from "@/lib/http/limited";
import { passwordChangeRequired } from "@/lib/http/refusals";
import { json, jsonError } from "@/lib/http/responses";
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
 * Password sign-in for API clients: one parse of the JSON body, then the browser's corridor
 * (signInWithPassword: per-username limit, ALTCHA, the shared username lockout, the hash budget,
 * the lockout again and Argon2id) behind a sliding-window limit per client address and path. A known device sends the
 * `device_token` from its last sign-in (or the browser's device cookie) and gets a new one. Only JSON is read: a
 * cross-site form cannot send it without a CORS preflight.
 */
export const POST = limited("/api/v1/authentication/token", async (request, limits) => {
  const { gate, client } = limits;
  const body = await readJson(request, gate.config.MAX_BODY_BYTES);
  if (!body.ok) return body.response;
  const input = apiSignInSchema.safeParse(body.value);
  if (!input.success) return jsonError(400, "invalid_input", ENTER_EMAIL_AND_PASSWORD, { fields: fieldErrors(input.error) });
  const { email, password, altcha, device_token } = input.data;
  // An app keeps its device token in the body; a browser calling the API sends its cookie.
  const deviceToken = device_token ?? deviceTokenOf(request, gate.config);

  const checked = await signInWithPassword(limits, { email, password, deviceToken }, { altcha });
  if (!checked.ok) return checked.refusal ?? json(401, INVALID_CREDENTIALS);
  // No token could be used before the breached password is replaced (apiCaller answers 403), and
  // the API has no form to replace it: the owner is sent to the site, and mailed.
  if (checked.passwordChangeRequired) return passwordChangeRequired();
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
  gate.log.info({ event: "api_tokens_issued", userId: user.id, familyId: refresh.familyId });
  const response = tokenPair(access.token, refresh.token, gate.config, { device_token: checked.device.token });
  // A browser that sent its cookie keeps its place in the owner's lane: the old one is now revoked.
  return device_token === undefined && deviceTokenOf(request, gate.config) !== undefined
    ? setDeviceCookie(response, gate.config, checked.device.token, checked.device.expiresAtMs, nowMs)
    : response;
});

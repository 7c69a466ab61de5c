import { familyIdOfSession } from "@/lib/users/not-me";
import type { NextRequest } from "next/server";
import type { SignInOutcome } from "@/lib/auth/sign-in-outcome";
import type { Gatehouse } from "@/lib/app";
import { truncateAddress } from "@/lib/events/security-events";
import type { ClientAddress } from "@/lib/http/client-address";
import { deviceTokenOf, setDeviceCookie } from "@/lib/http/cookies";
import { passwordChangeRequired } from "@/lib/http/refusals";
import { tokenPair } from "@/lib/http/responses";
import { apiClientLabel } from "@/lib/sessions/browser-label";
import { accessSubject, issueAccessToken } from "@/lib/tokens/access-token";
import { issueRefreshToken } from "@/lib/tokens/refresh-tokens";

/**
 * The answer to an API client whose sign-in is finished (its password alone, or its second step):
 * a new refresh family and an access token, with the device token that now identifies the client.
 * `appSentDeviceToken`: the app keeps its device token in the body; a browser that sent its cookie
 * keeps its place in the owner's lane through a new cookie (the old one is revoked).
 */
export async function apiTokensFor(
  gate: Gatehouse,
  request: NextRequest,
  client: ClientAddress,
  outcome: Extract<SignInOutcome, { ok: true }>,
  appSentDeviceToken: boolean,
): Promise<Response> {
  // No token could be used before a breached password is replaced (apiCaller answers 403), and
  // the API has no form to replace it: the owner is sent to the site, and mailed. The sign-in did
  // replace the client's device token, so the new one goes with the refusal: the owner's app stays
  // a known device (as a browser keeps its cookie) rather than a stranger from then on.
  const nowMs = gate.clock();
  const withDevice = (response: Response) =>
    !appSentDeviceToken && deviceTokenOf(request, gate.config) !== undefined
      ? setDeviceCookie(response, gate.config, outcome.device.token, outcome.device.expiresAtMs, nowMs)
      : response;
  if (outcome.passwordChangeRequired) return withDevice(passwordChangeRequired({ device_token: outcome.device.token }));
  const { user } = outcome;
  const label = apiClientLabel(request.headers.get("user-agent"));
  // The family's id is the sign-in's session id as a UUID: "This wasn't me" in the new-device mail names it.
  const refresh = await issueRefreshToken(
    gate.prisma,
    user.id,
    familyIdOfSession(outcome.sessionId),
    gate.config.tokens.refreshTtlMs,
    nowMs,
    {
      expiresAtMs: nowMs + gate.config.tokens.refreshFamilyLifetimeMs,
      client: label,
      address: truncateAddress(client.address),
      credentialGeneration: user.credentialGeneration,
    },
  );
  const access = await issueAccessToken(
    accessSubject(user, refresh),
    gate.config.tokens.secret,
    gate.config.tokens.accessTtlSeconds,
    nowMs,
  );
  await gate.events.refreshFamilyCreated(user.id, client, { browser: label });
  gate.log.info({ event: "api_tokens_issued", userId: user.id, familyId: refresh.familyId });
  return withDevice(tokenPair(access.token, refresh.token, gate.config, { device_token: outcome.device.token }));
}

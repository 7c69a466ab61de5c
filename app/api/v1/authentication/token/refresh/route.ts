import { z } from "zod";
import { fieldErrors } from "@/lib/auth/credentials";
import { readJson } from "@/lib/http/body";
import { limited } from "@/lib/auth/limited";
import { jsonError } from "@/lib/http/responses";
import { noticeOrigin } from "@/lib/auth/complete-sign-in";
import { browserLabel } from "@/lib/sessions/browser-label";
import { tokenPair } from "@/lib/http/responses";
import { issueAccessToken } from "@/lib/tokens/access-token";
import { rotateRefreshToken, type RotationFailure } from "@/lib/tokens/refresh-tokens";

export const dynamic = "force-dynamic";

// Ours are 43 characters; the bound only stops a large string being hashed. A string within it
// that is not one of ours is an invalid token (401), not invalid input.
const refreshSchema = z.object({
  refresh_token: z
    .string({ error: "refresh_token is required." })
    .min(1, "refresh_token is required.")
    .max(512, "refresh_token is too long."),
});

const MESSAGES: Record<RotationFailure, string> = {
  unknown: "The refresh token is not valid.",
  expired: "The refresh token has expired. Sign in again.",
  revoked: "The refresh token has been revoked. Sign in again.",
  reused: "This refresh token was already used, so the session it belongs to has been revoked. Sign in again.",
};

function invalidToken(reason: RotationFailure) {
  return jsonError(401, "invalid_token", MESSAGES[reason]);
}

/** Exchanges a refresh token for a new access token and a new refresh token of the same family. */
// Its own sliding-window counter, apart from the token endpoint's: the limit's key names the route.
export const POST = limited("/api/v1/authentication/token/refresh", async (request, limits) => {
  const { gate, client } = limits;
  const body = await readJson(request, gate.config.http.maxBodyBytes);
  if (!body.ok) return body.response;
  const input = refreshSchema.safeParse(body.value);
  if (!input.success)
    return jsonError(400, "invalid_input", "Send the refresh token as refresh_token.", { fields: fieldErrors(input.error) });

  const db = gate.prisma;
  const nowMs = gate.clock();
  const rotated = await rotateRefreshToken(db, input.data.refresh_token, gate.config.tokens.refreshTtlMs, nowMs);
  if (!rotated.ok) {
    if (rotated.reason === "reused") {
      // Someone else holds a copy of this session's token. Never log the token itself.
      gate.log.warn({ event: "refresh_token_reused", familyId: rotated.familyId, userId: rotated.userId, effect: "family revoked" });
      // The theft signal: the owner hears of it (once per quota window) and sees it on the account page.
      if (rotated.userId) {
        await gate.events.accountChanged(rotated.userId, "refresh_token_reused", client, { browser: browserLabel(limits.userAgent) });
        void gate.recovery.notice(
          "refresh_token_reused",
          { id: rotated.userId },
          noticeOrigin(gate, { client, userAgent: limits.userAgent }),
        );
      }
    } else {
      gate.log.info({ event: "refresh_token_refused", reason: rotated.reason, familyId: rotated.familyId });
    }
    return invalidToken(rotated.reason);
  }

  // A deleted account takes its refresh tokens with it (onDelete: Cascade): a rotated token has an account.
  // The access token names its family and generation, so it dies with them (apiCaller).
  const access = await issueAccessToken(rotated, gate.config.tokens.secret, gate.config.tokens.accessTtlSeconds, nowMs);
  gate.log.info({ event: "refresh_token_rotated", userId: rotated.userId, familyId: rotated.familyId });
  return tokenPair(access.token, rotated.token, gate.config);
});

import { errors, jwtVerify, SignJWT } from "jose";

const ISSUER = "gatehouse";
const AUDIENCE = "gatehouse-api";
const ALGORITHM = "HS256";

function key(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

/** A short-lived JWT for the API: the user id as `sub`, nothing else about the user. */
export async function issueAccessToken(
  userId: string,
  secret: string,
  ttlSeconds: number,
  nowMs: number,
): Promise<{ token: string; expiresAtMs: number }> {
  const issuedAt = Math.floor(nowMs / 1000);
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: ALGORITHM, typ: "JWT" })
    .setSubject(userId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + ttlSeconds)
    .sign(key(secret));
  return { token, expiresAtMs: (issuedAt + ttlSeconds) * 1000 };
}

export type AccessTokenCheck = { ok: true; userId: string } | { ok: false; reason: "expired" | "invalid" };

/** Only HS256 with our issuer and audience: `alg: none` and foreign tokens are refused. */
export async function verifyAccessToken(token: string, secret: string, nowMs: number): Promise<AccessTokenCheck> {
  try {
    const { payload } = await jwtVerify(token, key(secret), {
      algorithms: [ALGORITHM],
      issuer: ISSUER,
      audience: AUDIENCE,
      currentDate: new Date(nowMs),
    });
    return typeof payload.sub === "string" && payload.sub !== "" ? { ok: true, userId: payload.sub } : { ok: false, reason: "invalid" };
  } catch (error) {
    return { ok: false, reason: error instanceof errors.JWTExpired ? "expired" : "invalid" };
  }
}

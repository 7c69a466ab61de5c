import { errors, jwtVerify, SignJWT } from "jose";
import type { PrismaClient } from "@/lib/generated/prisma/client";
import { uuidSchema } from "./opaque-token";

const ISSUER = "gatehouse";
const AUDIENCE = "gatehouse-api";
const ALGORITHM = "HS256";

function key(secret: string): Uint8Array {
  return new TextEncoder().encode(secret);
}

/**
 * What an access token comes from: the user, the refresh family (API session) its sign-in or
 * refresh belongs to, and the credential generation that sign-in's password check read. The
 * token dies with either (accessTokenStanding), not only at its expiry.
 */
export type AccessTokenSubject = { userId: string; familyId: string; credentialGeneration: number };

/** A short-lived JWT for the API: `sub`, `fam` and `gen`, nothing else about the user. */
export async function issueAccessToken(
  subject: AccessTokenSubject,
  secret: string,
  ttlSeconds: number,
  nowMs: number,
): Promise<{ token: string; expiresAtMs: number }> {
  const issuedAt = Math.floor(nowMs / 1000);
  const token = await new SignJWT({ fam: subject.familyId, gen: subject.credentialGeneration })
    .setProtectedHeader({ alg: ALGORITHM, typ: "JWT" })
    .setSubject(subject.userId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + ttlSeconds)
    .sign(key(secret));
  return { token, expiresAtMs: (issuedAt + ttlSeconds) * 1000 };
}

export type AccessTokenCheck = ({ ok: true } & AccessTokenSubject) | { ok: false; reason: "expired" | "invalid" };

/**
 * Only HS256 with our issuer and audience: `alg: none` and foreign tokens are refused. A token
 * without a family and generation (one minted before they were required) is invalid: it could
 * not be checked against a revocation.
 */
export async function verifyAccessToken(token: string, secret: string, nowMs: number): Promise<AccessTokenCheck> {
  try {
    const { payload } = await jwtVerify(token, key(secret), {
      algorithms: [ALGORITHM],
      issuer: ISSUER,
      audience: AUDIENCE,
      currentDate: new Date(nowMs),
    });
    const { sub, fam, gen } = payload;
    const wellFormed =
      uuidSchema.safeParse(sub).success &&
      uuidSchema.safeParse(fam).success &&
      typeof gen === "number" &&
      Number.isSafeInteger(gen) &&
      gen >= 0;
    return wellFormed
      ? { ok: true, userId: sub as string, familyId: fam as string, credentialGeneration: gen }
      : { ok: false, reason: "invalid" };
  } catch (error) {
    return { ok: false, reason: error instanceof errors.JWTExpired ? "expired" : "invalid" };
  }
}

/** Why a verified token no longer opens anything; null while it stands. */
export type AccessTokenEnd = "account_gone" | "family_revoked" | "credentials_changed";

/**
 * Whether a verified token still stands: its account exists, its family has a token that is not
 * revoked (revocation marks every token of the family, rotated ones included) and its generation
 * is the account's. One indexed read (User by key, RefreshToken by familyId), like a browser
 * session's check. A password change, reset, "sign out everywhere" or the operator's
 * revoke-sessions raises the generation or revokes the family, so every token from before dies
 * at once, including one that a sign-in already in flight is handed afterwards.
 * "password_change_required": the token stands, but its account's password is breached and must
 * be replaced (in the browser) before the API serves it.
 */
export async function accessTokenStanding(
  prisma: PrismaClient,
  subject: AccessTokenSubject,
): Promise<AccessTokenEnd | "password_change_required" | null> {
  const [row] = await prisma.$queryRaw<{ generation: number; familyLive: boolean; breached: boolean }[]>`
    SELECT u."credentialGeneration" AS "generation", u."passwordBreachedAt" IS NOT NULL AS "breached",
           EXISTS (SELECT 1 FROM "RefreshToken" r
                   WHERE r."familyId" = ${subject.familyId}::uuid AND r."userId" = u."id" AND r."revokedAt" IS NULL) AS "familyLive"
    FROM "User" u WHERE u."id" = ${subject.userId}::uuid`;
  if (!row) return "account_gone";
  if (subject.credentialGeneration < Number(row.generation)) return "credentials_changed";
  if (!row.familyLive) return "family_revoked";
  return row.breached ? "password_change_required" : null;
}

/** The subject of the access token a password sign-in gets: its user, new family and the generation its check read. */
export function accessSubject(user: { id: string; credentialGeneration: number }, family: { familyId: string }): AccessTokenSubject {
  return { userId: user.id, familyId: family.familyId, credentialGeneration: user.credentialGeneration };
}

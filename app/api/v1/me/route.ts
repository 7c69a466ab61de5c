import { apiCaller } from "@/lib/auth/api-auth";
import { limited } from "@/lib/auth/limited";
import { json, jsonError } from "@/lib/http/responses";
import { uuidSchema } from "@/lib/tokens/opaque-token";

export const dynamic = "force-dynamic";

/** The caller's own account, by Bearer access token or browser session. */
export const GET = limited("/api/v1/me", async (request, limits) => {
  const auth = await apiCaller(request, limits.gate);
  if (!auth.ok) return auth.response;
  const { caller } = auth;

  const refused = await limits.limit("user", caller.userId);
  if (refused) return refused;

  // A signed token names an account that may since have been deleted; a non-UUID id never reaches the query.
  const user = uuidSchema.safeParse(caller.userId).success
    ? await limits.gate.prisma.user.findUnique({ where: { id: caller.userId }, select: { id: true, email: true, createdAt: true } })
    : null;
  if (!user) {
    return caller.via === "bearer"
      ? jsonError(
          401,
          "invalid_token",
          "The account for this access token no longer exists.",
          {},
          { "WWW-Authenticate": 'Bearer error="invalid_token"' },
        )
      : jsonError(
          401,
          "unauthenticated",
          "The account for this session no longer exists. Sign in again.",
          {},
          { "WWW-Authenticate": "Bearer" },
        );
  }
  return json(200, { id: user.id, email: user.email, createdAt: user.createdAt.toISOString() });
});

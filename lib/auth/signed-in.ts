import { getServerSession } from "next-auth";
import { authOptions } from "@/lib/auth/options";
import { prisma } from "@/lib/db/client";

/**
 * The signed-in user's id, or null: a session for an account that no longer exists counts as
 * signed out (the account page sends such a visitor to sign in, so the sign-in page must not
 * send them back).
 */
export async function signedInUserId(): Promise<string | null> {
  const session = await getServerSession(authOptions());
  const userId = (session?.user as { id?: string } | undefined)?.id;
  if (!userId) return null;
  const user = await (await prisma()).user.findUnique({ where: { id: userId }, select: { id: true } });
  return user ? userId : null;
}

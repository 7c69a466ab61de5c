import { getServerSession } from "next-auth";
import { redirect } from "next/navigation";
import { authOptions } from "@/lib/auth/options";
import { prisma } from "@/lib/db/client";

export const dynamic = "force-dynamic";

export default async function AccountPage() {
  const session = await getServerSession(authOptions());
  const userId = (session?.user as { id?: string } | undefined)?.id;
  if (!userId) redirect("/sign-in?callbackUrl=%2Faccount");
  const user = await (await prisma()).user.findUnique({ where: { id: userId }, select: { email: true, createdAt: true } });
  // A valid session for an account that no longer exists is treated as signed out.
  if (!user) redirect("/sign-in?callbackUrl=%2Faccount");
  return (
    <div className="card">
      <h1>Your account</h1>
      <dl>
        <dt>Email</dt>
        <dd data-testid="account-email">{user.email}</dd>
        <dt>Member since</dt>
        <dd>{user.createdAt.toISOString().slice(0, 10)}</dd>
      </dl>
    </div>
  );
}

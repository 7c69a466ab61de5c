import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentSession } from "@/lib/auth/current-session";
import { gatehouse } from "@/lib/auth/gatehouse";
import { hasOtherFactor } from "@/lib/users/accounts";
import { ChangePasswordSection } from "../ChangePasswordSection";
import { PageMessages } from "../../components/PageMessages";

export const metadata: Metadata = { title: "Choose a new password" };
export const dynamic = "force-dynamic";

/**
 * Where an account whose password was found in a breach corpus is sent, from every other page,
 * until it chooses a new one (the layout redirects; the API answers 403 password_change_required).
 */
export default async function NewPasswordPage() {
  const session = await currentSession();
  if (!session) redirect("/sign-in?callbackUrl=%2Faccount%2Fnew-password");
  if (!session.passwordChangeRequired) redirect("/account");
  const gate = await gatehouse();
  const user = await gate.prisma.user.findUnique({ where: { id: session.userId }, select: { email: true } });
  if (!user) redirect("/sign-in");
  return (
    <PageMessages>
      <>
        <div className="card" role="alert">
          <h1>Choose a new password</h1>
          <p>
            Your password has appeared in a data breach of another site, so attackers try it everywhere. Choose a new one before you go on;
            we have sent you an email about it too.
          </p>
        </div>
        <ChangePasswordSection
          currentSid={session.sid}
          email={user.email}
          hasOtherFactor={await hasOtherFactor(gate.prisma, session.userId)}
          heading="New password"
        />
      </>
    </PageMessages>
  );
}

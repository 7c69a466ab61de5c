import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { redirect } from "next/navigation";
import { currentSession } from "@/lib/auth/browser-session";
import { gatehouse } from "@/lib/app";
import { hasOtherFactor } from "@/lib/users/accounts";
import { ChangePasswordSection } from "../ChangePasswordSection";
import { ACCOUNT_CLIENT_NAMESPACES } from "../namespaces";
import { PageMessages } from "../../components/PageMessages";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("account.password"))("newTitle") };
}
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
  const t = await getTranslations("account.password");
  return (
    <PageMessages namespaces={ACCOUNT_CLIENT_NAMESPACES}>
      <>
        <div className="card" role="alert">
          <h1>{t("newTitle")}</h1>
          <p>{t("breached")}</p>
        </div>
        <ChangePasswordSection
          userId={session.userId}
          currentSid={session.sid}
          email={user.email}
          hasOtherFactor={await hasOtherFactor(gate.prisma, session.userId)}
          heading={t("newHeading")}
        />
      </>
    </PageMessages>
  );
}

import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { redirect } from "next/navigation";
import { currentSession } from "@/lib/auth/current-session";
import { gatehouse } from "@/lib/auth/gatehouse";
import { hasOtherFactor } from "@/lib/users/accounts";
import { ChangePasswordSection } from "../ChangePasswordSection";
import { PageMessages } from "../../components/PageMessages";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("recovery.breached"))("title") };
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
  const [gate, t] = await Promise.all([gatehouse(), getTranslations("recovery.breached")]);
  const user = await gate.prisma.user.findUnique({ where: { id: session.userId }, select: { email: true } });
  if (!user) redirect("/sign-in");
  return (
    // The change-password form's words are the account page's.
    <PageMessages namespaces={["account"]}>
      <>
        <div className="card" role="alert">
          <h1>{t("heading")}</h1>
          <p>{t("why")}</p>
        </div>
        <ChangePasswordSection
          currentSid={session.sid}
          email={user.email}
          hasOtherFactor={await hasOtherFactor(gate.prisma, session.userId)}
          heading={t("formHeading")}
        />
      </>
    </PageMessages>
  );
}

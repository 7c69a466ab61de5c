import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { NoScriptNotice } from "../components/NoScriptNotice";
import { ForgotPasswordForm } from "./ForgotPasswordForm";
import { PageMessages } from "../components/PageMessages";

export const dynamic = "force-dynamic";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("recovery.forgot"))("title") };
}

export default async function ForgotPasswordPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const [{ notice, email }, t] = await Promise.all([searchParams, getTranslations("recovery.forgot")]);
  return (
    <PageMessages namespaces={["recovery.forgot"]}>
      <div className="card">
        <h1>{t("heading")}</h1>
        <NoScriptNotice posted={notice === "javascript"} action="forgot" />
        <ForgotPasswordForm initialEmail={typeof email === "string" ? email : ""} />
      </div>
    </PageMessages>
  );
}

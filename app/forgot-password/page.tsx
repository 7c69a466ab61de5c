import type { Metadata } from "next";
import { cookies } from "next/headers";
import { getTranslations } from "next-intl/server";
import { gatehouse } from "@/lib/app";
import { carriedEmailOf } from "@/lib/http/carried-email";
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
  const [{ notice }, t, jar, gate] = await Promise.all([searchParams, getTranslations("recovery.forgot"), cookies(), gatehouse()]);
  // The address a form sent without JavaScript typed (the no-script route kept it, not in the URL).
  const email = carriedEmailOf(jar, gate.config);
  return (
    <PageMessages namespaces={["recovery.forgot"]}>
      <div className="card">
        <h1>{t("heading")}</h1>
        <NoScriptNotice posted={notice === "javascript"} action="forgot" />
        <ForgotPasswordForm initialEmail={email} />
      </div>
    </PageMessages>
  );
}

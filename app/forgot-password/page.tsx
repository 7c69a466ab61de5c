import type { Metadata } from "next";
import { NoScriptNotice } from "../components/NoScriptNotice";
import { ForgotPasswordForm } from "./ForgotPasswordForm";
import { PageMessages } from "../components/PageMessages";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Reset your password" };

export default async function ForgotPasswordPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { notice, email } = await searchParams;
  return (
    <PageMessages>
      <div className="card">
        <h1>Reset your password</h1>
        <NoScriptNotice posted={notice === "javascript"} action="forgot" />
        <ForgotPasswordForm initialEmail={typeof email === "string" ? email : ""} />
      </div>
    </PageMessages>
  );
}

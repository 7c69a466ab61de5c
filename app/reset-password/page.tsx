import type { Metadata } from "next";
import { EmailLinkForm } from "../components/EmailLinkForm";
import { NoScriptNotice } from "../components/NoScriptNotice";
import { PageMessages } from "../components/PageMessages";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Choose a new password", referrer: "no-referrer" };

/** Opened from an emailed link: nothing happens until the button is pressed. */
export default async function ResetPasswordPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { notice } = await searchParams;
  return (
    <PageMessages>
      <div className="card">
        <h1>Choose a new password</h1>
        <NoScriptNotice posted={notice === "javascript"} action="reset" />
        <EmailLinkForm
          endpoint="/api/password/reset"
          noScriptForm="reset-password"
          action="Set the new password"
          pendingAction="Saving…"
          done="reset"
          password="new"
        />
      </div>
    </PageMessages>
  );
}

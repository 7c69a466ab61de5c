import type { Metadata } from "next";
import { EmailLinkForm } from "../components/EmailLinkForm";
import { NoScriptNotice } from "../components/NoScriptNotice";
import { PageMessages } from "../components/PageMessages";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Confirm your email address", referrer: "no-referrer" };

/** Opened from an emailed link: nothing happens until the button is pressed. */
export default async function VerifyEmailPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { notice } = await searchParams;
  return (
    <PageMessages>
      <div className="card">
        <h1>Confirm your email address</h1>
        <NoScriptNotice posted={notice === "javascript"} action="verify" />
        <EmailLinkForm
          endpoint="/api/email/verify"
          noScriptForm="verify-email"
          action="Confirm my address"
          pendingAction="Confirming…"
          done="verified"
          password="current"
        />
      </div>
    </PageMessages>
  );
}

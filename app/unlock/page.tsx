import type { Metadata } from "next";
import { EmailLinkForm } from "../components/EmailLinkForm";
import { NoScriptNotice } from "../components/NoScriptNotice";
import { PageMessages } from "../components/PageMessages";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Sign in on this browser", referrer: "no-referrer" };

/** Opened from an emailed link: nothing happens until the button is pressed. */
export default async function UnlockPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { notice } = await searchParams;
  return (
    <PageMessages>
      <div className="card">
        <h1>Sign in on this browser</h1>
        <NoScriptNotice posted={notice === "javascript"} action="unlock" />
        <p>
          Sign-in to your account was paused after several wrong passwords, to keep out whoever was guessing. Your password held, and
          devices you have signed in with before are not paused.
        </p>
        <p>
          The button below makes this browser one your account knows, so the pause no longer applies to it. It does not sign you in: you
          type your password next. The link works once.
        </p>
        <EmailLinkForm
          endpoint="/api/unlock"
          noScriptForm="unlock"
          action="Let this browser sign in"
          pendingAction="Unlocking…"
          done="unlocked"
          preview="/api/unlock/preview"
        />
      </div>
    </PageMessages>
  );
}

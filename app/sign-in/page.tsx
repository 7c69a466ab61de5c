import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentSession } from "@/lib/auth/current-session";
import { onwardPath, safeCallbackPath } from "@/lib/http/callback-url";
import { NoScriptNotice } from "../components/NoScriptNotice";
import { PasskeySignIn } from "./PasskeySignIn";
import { SignInForm } from "./SignInForm";
import { PageMessages } from "../components/PageMessages";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Sign in" };

/** What an emailed link's page just did, said above the form. */
const DONE: Record<string, string> = {
  verified: "Your email address is confirmed. Sign in to continue.",
  reset: "Your password is changed and every session was signed out. Sign in with the new password.",
  unlocked: "This browser can sign in to your account now. Enter your password to continue.",
};

function doneNotice(done: string | undefined): string | null {
  return done !== undefined && Object.hasOwn(DONE, done) ? DONE[done]! : null;
}

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
  const callbackPath = safeCallbackPath(first(params.callbackUrl));
  // Already signed in: go where signing in would have led (a same-origin path only).
  if (await currentSession()) redirect(onwardPath(callbackPath));
  return (
    <PageMessages>
      <div className="card">
        <h1>Sign in</h1>
        <NoScriptNotice posted={first(params.notice) === "javascript"} action="signing in" />
        <SignInForm callbackPath={callbackPath} done={doneNotice(first(params.done))} initialEmail={first(params.email) ?? ""} />
        <PasskeySignIn callbackPath={callbackPath} />
      </div>
    </PageMessages>
  );
}

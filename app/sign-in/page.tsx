import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentSession } from "@/lib/auth/current-session";
import { onwardPath, safeCallbackPath } from "@/lib/http/callback-url";
import { NoScriptNotice } from "../components/NoScriptNotice";
import { SignInForm } from "./SignInForm";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Sign in" };

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
  const callbackPath = safeCallbackPath(first(params.callbackUrl));
  // Already signed in: go where signing in would have led (a same-origin path only).
  if (await currentSession()) redirect(onwardPath(callbackPath));
  return (
    <div className="card">
      <h1>Sign in</h1>
      <NoScriptNotice posted={first(params.notice) === "javascript"} action="signing in" />
      <SignInForm callbackPath={callbackPath} registered={first(params.registered) === "1"} initialEmail={first(params.email) ?? ""} />
    </div>
  );
}

import { safeCallbackPath } from "@/lib/http/callback-url";
import { NoScriptNotice } from "../components/NoScriptNotice";
import { SignInForm } from "./SignInForm";

export const dynamic = "force-dynamic";

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
  return (
    <div className="card">
      <h1>Sign in</h1>
      <NoScriptNotice posted={first(params.notice) === "javascript"} action="signing in" />
      <SignInForm
        callbackPath={safeCallbackPath(first(params.callbackUrl))}
        registered={first(params.registered) === "1"}
        initialEmail={first(params.email) ?? ""}
      />
    </div>
  );
}

import type { Metadata } from "next";
import { getTranslations } from "next-intl/server";
import { redirect } from "next/navigation";
import { gatehouse } from "@/lib/app";
import { currentSession } from "@/lib/auth/browser-session";
import { passkeyObstacle } from "@/lib/passkeys/passkey-rules";
import { onwardPath, safeCallbackPath } from "@/lib/http/callback-url";
import { NoScriptNotice } from "../components/NoScriptNotice";
import { PasskeySignIn } from "./PasskeySignIn";
import { SignInForm } from "./SignInForm";
import { PageMessages } from "../components/PageMessages";

export const dynamic = "force-dynamic";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("signIn"))("title") };
}

/** What an emailed link's page just did, said above the form: its key in the `signIn` catalogue. */
const DONE: Record<string, string> = {
  verified: "doneVerified",
  reset: "doneReset",
  unlocked: "doneUnlocked",
  email_changed: "doneEmailChanged",
  email_change_undone: "doneEmailChangeUndone",
  not_me: "doneNotMe",
};

function doneNotice(done: string | undefined, t: (key: string) => string): string | null {
  return done !== undefined && Object.hasOwn(DONE, done) ? t(DONE[done]!) : null;
}

export default async function SignInPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
  const callbackPath = safeCallbackPath(first(params.callbackUrl));
  // Already signed in: go where signing in would have led (a same-origin path only).
  if (await currentSession()) redirect(onwardPath(callbackPath));
  const t = await getTranslations("signIn");
  return (
    // The second step's words too: a right password may ask for it (its code loads only then).
    <PageMessages namespaces={["signIn", "secondStep"]}>
      <div className="card">
        <h1>{t("heading")}</h1>
        <NoScriptNotice posted={first(params.notice) === "javascript"} action="signIn" />
        <SignInForm callbackPath={callbackPath} done={doneNotice(first(params.done), t)} />
        {/* Where browsers make no passkeys (an IP address), none can sign in: the account page says why. */}
        {passkeyObstacle((await gatehouse()).passkeySettings.rp.origin) ? null : <PasskeySignIn callbackPath={callbackPath} />}
      </div>
    </PageMessages>
  );
}

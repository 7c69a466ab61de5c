import { cookies } from "next/headers";
import { getTranslations } from "next-intl/server";
import { gatehouse } from "@/lib/app";
import { cookieJar, csrfTokenOfCookies } from "@/lib/auth/next-auth/cookies";
import { SignOutButton, SignOutSubmit } from "./SignOutButton";

/**
 * Sign-out as a plain form post, so it works without JavaScript: the CSRF token comes from the
 * cookie next-auth set when this browser fetched one. Without that cookie, the script button.
 */
export async function SignOutForm() {
  const [jar, t] = await Promise.all([cookies().then(cookieJar), getTranslations("common")]);
  const csrfToken = csrfTokenOfCookies((await gatehouse()).config, jar);
  const labels = { label: t("signOut"), pendingLabel: t("signingOut") };
  if (!csrfToken) return <SignOutButton {...labels} />;
  return (
    <form method="post" action="/api/auth/signout" className="inline">
      <input type="hidden" name="csrfToken" value={csrfToken} />
      <input type="hidden" name="callbackUrl" value="/" />
      <SignOutSubmit {...labels} />
    </form>
  );
}

import { cookies } from "next/headers";
import { getTranslations } from "next-intl/server";
import { gatehouse } from "@/lib/app";
import { sessionClaimsOfCookies } from "@/lib/auth/next-auth/session-cookie";
import { cookieJar } from "@/lib/http/cookies";
import { sessionFormToken } from "@/lib/http/form-token";
import { SignOutSubmit } from "./SignOutSubmit";

/**
 * Sign-out as a plain form post, so it works without JavaScript. The CSRF rule (lib/http/csrf.ts)
 * wants the session's form token beside the session cookie; a cookie that holds no session needs
 * none (there is nothing another site could end).
 */
export async function SignOutForm() {
  const [jar, t, gate] = await Promise.all([cookies().then(cookieJar), getTranslations("common"), gatehouse()]);
  const claims = await sessionClaimsOfCookies(gate.config, jar);
  const sid = typeof claims?.sid === "string" ? claims.sid : null;
  return (
    <form method="post" action="/api/auth/signout" className="inline">
      {sid && <input type="hidden" name="formToken" value={sessionFormToken(gate.config.session.secret, sid)} />}
      <input type="hidden" name="callbackUrl" value="/" />
      <SignOutSubmit label={t("signOut")} pendingLabel={t("signingOut")} />
    </form>
  );
}

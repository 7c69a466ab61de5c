import { getTranslations } from "next-intl/server";
/**
 * Says why a form did nothing: the robot check (ALTCHA) is a proof of work that runs in the
 * browser, so signing in and registering need JavaScript. Server-rendered, so it shows when
 * JavaScript is off (noscript) and after a form was sent before the page was ready (`notice`).
 * One banner either way: after such a post the server cannot tell whether JavaScript is off or was
 * only late, so that banner says what to do in both cases instead of a second, noscript one.
 */
/** `action`: what needs JavaScript, a key of the `forms.action` catalogue. */
export async function NoScriptNotice({ posted, action }: { posted: boolean; action: string }) {
  const t = await getTranslations("forms");
  const needs = t("needsJavaScript", { action: t(`action.${action}`) });
  if (posted) {
    return (
      <p className="banner warn" role="status" data-testid="posted-too-early">
        {/* "Forgot password?" holds no password: it says its address is kept instead. */}
        {t(action === "forgot" ? "postedTooEarlyForgot" : "postedTooEarly", { needs })}
      </p>
    );
  }
  return (
    <noscript>
      <p className="banner warn" data-testid="noscript-notice">
        {t("turnJavaScriptOn", { needs })}
      </p>
    </noscript>
  );
}

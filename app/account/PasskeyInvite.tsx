import { getTranslations } from "next-intl/server";

/**
 * After a password sign-in, an account with no passkey is invited to add one: it cannot be phished
 * and it passes while new devices are paused. "Don't ask again" is stored on the account. A plain
 * form: nothing here needs JavaScript.
 */
export async function PasskeyInvite({ formToken }: { formToken: string }) {
  const t = await getTranslations("account.passkeyInvite");
  return (
    <div className="card" data-testid="passkey-invite">
      <h2>{t("heading")}</h2>
      <p>{t("body")}</p>
      <p>
        <a href="#passkeys">{t("add")}</a>
      </p>
      <form method="post" action="/api/account/passkey-invite/dismiss" className="inline">
        <input type="hidden" name="formToken" value={formToken} />
        <button type="submit" className="secondary">
          {t("dismiss")}
        </button>
      </form>
    </div>
  );
}

"use client";

import { useT } from "../components/Messages";
import { useMoment } from "./AccountTime";
import { RefusalBanner, localRefusal } from "../components/RefusalBanner";
import { handled } from "../components/handled";
import { useHydrated } from "../components/hydrated";
import { ConfirmItsYou } from "./ConfirmItsYou";
import { FreshPostForm } from "./FreshPostForm";
import { postForm, useFreshAction } from "./useFreshAction";

export type PasskeyItem = { id: string; name: string; createdAt: string; lastUsedAt: string | null; synced: boolean };

/** canAdd: false where browsers make no passkeys (the section says why). */
type Props = {
  formToken: string;
  email: string;
  passkeys: PasskeyItem[];
  canAdd: boolean;
  /** Whether the account has a password: "Confirm it's you" offers it only then. */
  hasPassword: boolean;
};

/**
 * The account's passkeys: add one (the browser's WebAuthn dialog), rename, remove. Adding and
 * removing need a fresh authentication: when the server asks for one, "Confirm it's you" comes
 * first and the action carries on after it. Rename and remove also work as plain forms.
 */
export function Passkeys({ formToken, email, passkeys, canAdd, hasPassword }: Props) {
  const t = useT();
  const moment = useMoment();
  const hydrated = useHydrated();
  const { pending, refusal, setRefusal, nowMs, confirming, setConfirming, freshly } = useFreshAction();

  async function addPasskey(): Promise<Response | null> {
    const { startRegistration } = await import("@simplewebauthn/browser");
    const optionsRes = await postForm("/api/account/passkeys/options", { formToken, purpose: "register" });
    if (!optionsRes.ok) return optionsRes;
    const { options } = (await optionsRes.json()) as { options: Parameters<typeof startRegistration>[0]["optionsJSON"] };
    const credential = await startRegistration({ optionsJSON: options }).catch(() => null);
    if (!credential) {
      setRefusal(localRefusal("passkey_invalid", t("account.passkeys.noneMade")));
      return null;
    }
    return postForm("/api/account/passkeys", { formToken, credential: JSON.stringify(credential) });
  }

  return (
    <div className="passkeys">
      <RefusalBanner refusal={refusal} form="sign-in" nowMs={nowMs} testId="passkeys-error" />
      {confirming ? (
        <ConfirmItsYou
          formToken={formToken}
          email={email}
          ways={{ password: hasPassword, passkey: passkeys.length > 0 }}
          reason={confirming.reason}
          onConfirmed={() => void confirming.resume()}
          onCancel={() => setConfirming(null)}
        />
      ) : null}
      {passkeys.length === 0 ? (
        <p>{t("account.passkeys.none")}</p>
      ) : (
        <ul className="passkey-list" data-testid="passkey-list">
          {passkeys.map((passkey) => (
            <li key={passkey.id} data-testid="passkey">
              <p>
                <strong>{passkey.name}</strong>
                {passkey.synced ? <span className="hint"> {t("account.passkeys.synced")}</span> : null}
              </p>
              <p className="hint">
                <time dateTime={passkey.createdAt}>{t("account.passkeys.added", { when: moment(passkey.createdAt) })}</time>{" "}
                {passkey.lastUsedAt ? (
                  <time dateTime={passkey.lastUsedAt}>{t("account.passkeys.lastUsed", { when: moment(passkey.lastUsedAt) })}</time>
                ) : (
                  t("account.passkeys.notUsed")
                )}
              </p>
              <form method="post" action="/api/account/passkeys/rename" className="passkey-rename">
                <input type="hidden" name="formToken" value={formToken} />
                <input type="hidden" name="id" value={passkey.id} />
                <div className="field">
                  <label htmlFor={`passkey-name-${passkey.id}`}>{t("account.passkeys.name")}</label>
                  <input id={`passkey-name-${passkey.id}`} name="name" type="text" defaultValue={passkey.name} maxLength={60} required />
                </div>
                <button type="submit" className="secondary" aria-label={t("account.passkeys.renameLabel", { name: passkey.name })}>
                  {t("account.passkeys.rename")}
                </button>
              </form>
              <FreshPostForm
                action="/api/account/passkeys/remove"
                formClassName="passkey-remove"
                formToken={formToken}
                id={passkey.id}
                reason={t("account.passkeys.removeReason", { name: passkey.name })}
                freshly={freshly}
                label={t("account.passkeys.removeLabel", { name: passkey.name })}
                text={t("account.passkeys.remove")}
              />
            </li>
          ))}
        </ul>
      )}
      {!canAdd ? null : hydrated ? (
        <button
          type="button"
          className="primary"
          aria-disabled={pending ? true : undefined}
          onClick={() => {
            if (!pending) handled(freshly(t("account.passkeys.addReason"), addPasskey));
          }}
        >
          {pending ? t("account.passkeys.waiting") : t("account.passkeys.add")}
        </button>
      ) : (
        <p className="hint">{t("account.passkeys.needsJavaScript")}</p>
      )}
    </div>
  );
}

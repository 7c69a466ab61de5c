"use client";

import { useT } from "../components/Messages";
import { useHydrated } from "../components/hydrated";
import { samePath, useLinkToken } from "../components/EmailLinkForm";
import { useGuardedSubmit, type Send } from "../components/guarded-submit";
import { RefusalBanner, localRefusal, refusalFrom } from "../components/RefusalBanner";

/**
 * The page of an emailed `new_passkey` link: nothing happens until the button is pressed (mail
 * scanners open links). Then the link's registration options, the browser's WebAuthn dialog, and
 * the answer posted with the token: the server makes the passkey, confirms the address and signs
 * this browser in.
 */
export function NewPasskeyForm() {
  const t = useT();
  const hydrated = useHydrated();
  const token = useLinkToken();
  const submit = useGuardedSubmit(t("messages.unavailable"));

  function check(): Send | undefined {
    if (!token) return;
    return async () => {
      const { startRegistration } = await import("@simplewebauthn/browser");
      const post = (body: Record<string, unknown>) =>
        fetch(body.credential === undefined ? "/api/new-passkey/options" : "/api/new-passkey", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify(body),
        });
      const optionsRes = await post({ token });
      if (!optionsRes.ok) {
        submit.setRefusal(await refusalFrom(optionsRes));
        return;
      }
      const { options } = (await optionsRes.json()) as { options: Parameters<typeof startRegistration>[0]["optionsJSON"] };
      const credential = await startRegistration({ optionsJSON: options }).catch(() => null);
      if (!credential) {
        submit.setRefusal(localRefusal("passkey_invalid", t("recovery.newPasskey.noneMade")));
        return;
      }
      const res = await post({ token, credential });
      if (res.ok) {
        const { url } = (await res.json().catch(() => ({}))) as { url?: unknown };
        // The answer set the session cookie: a full navigation, so the next page's server components see it.
        window.location.assign(samePath(url) ?? "/account");
        return "leaving";
      }
      submit.setRefusal(await refusalFrom(res));
    };
  }

  return (
    <>
      <RefusalBanner refusal={submit.refusal} form="recovery" nowMs={submit.nowMs} testId="new-passkey-error" />
      {token === null ? (
        <p className="banner error" role="alert" data-testid="link-missing">
          {t("recovery.newPasskey.noToken")}
        </p>
      ) : (
        <form onSubmit={(event) => submit.handle(event, check)} noValidate method="post" data-hydrated={hydrated}>
          <button type="submit" className="primary" aria-disabled={submit.blocked || !token ? true : undefined}>
            {submit.pending ? t("recovery.newPasskey.pending") : t("recovery.newPasskey.submit")}
          </button>
        </form>
      )}
    </>
  );
}

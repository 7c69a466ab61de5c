"use client";

import { useT } from "../components/Messages";
import { useEffect, useState } from "react";
import { RefusalBanner, localRefusal, refusalFrom, useRefusalClock, type Refusal } from "../components/RefusalBanner";

type Props = { callbackPath: string };

/** The WebAuthn client, fetched only when a passkey is offered (the page itself does not carry it). */
const webauthn = () => import("@simplewebauthn/browser");

/**
 * "Sign in with a passkey": a discoverable credential, so no email is typed. Where the browser
 * supports it, the same ceremony is also offered in the email field's autofill (conditional
 * mediation, `autocomplete="username webauthn"`), started once the page is interactive. A
 * passkey sign-in is not refused by a lockout that strangers caused.
 */
export function PasskeySignIn({ callbackPath }: Props) {
  const t = useT();
  const [pending, setPending] = useState(false);
  const [supported, setSupported] = useState<boolean | null>(null);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const nowMs = useRefusalClock(refusal);

  async function run(useBrowserAutofill: boolean) {
    const { startAuthentication } = await webauthn();
    const optionsRes = await fetch("/api/auth/passkey/options", { method: "POST", cache: "no-store" });
    if (!optionsRes.ok) {
      setRefusal(await refusalFrom(optionsRes));
      return;
    }
    const { options } = (await optionsRes.json()) as { options: Parameters<typeof startAuthentication>[0]["optionsJSON"] };
    let credential;
    try {
      credential = await startAuthentication({ optionsJSON: options, useBrowserAutofill });
    } catch {
      // Cancelled, timed out, or replaced by another ceremony: nothing to say for the autofill one.
      if (!useBrowserAutofill) setRefusal(localRefusal("passkey_invalid", t("signIn.noPasskeyUsed")));
      return;
    }
    setPending(true);
    const res = await fetch("/api/auth/passkey", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ credential, callbackUrl: callbackPath }),
    });
    if (res.ok) {
      // A full navigation, so every server component sees the new session cookie.
      window.location.assign(callbackPath);
      return;
    }
    setRefusal(await refusalFrom(res));
    setPending(false);
  }

  useEffect(() => {
    let cancelled = false;
    webauthn()
      .then(async ({ browserSupportsWebAuthn, browserSupportsWebAuthnAutofill }) => {
        if (cancelled) return;
        setSupported(browserSupportsWebAuthn());
        if (!(await browserSupportsWebAuthnAutofill()) || cancelled) return;
        await run(true);
      })
      // Failures of the background offer (its script included) are silent: the password stays.
      .catch(() => {});
    return () => {
      // React runs effects twice in development; the second offer replaces the first (the
      // library aborts the older ceremony itself).
      cancelled = true;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps -- offered once per page
  }, []);

  // Not in the server's HTML (it does nothing without JavaScript), nor where the browser has no WebAuthn.
  if (supported !== true) return null;
  return (
    <div className="passkey-sign-in">
      <p className="divider" aria-hidden="true">
        {t("signIn.or")}
      </p>
      <RefusalBanner refusal={refusal} form="sign-in" nowMs={nowMs} testId="passkey-error" />
      <button
        type="button"
        className="secondary"
        aria-disabled={pending ? true : undefined}
        onClick={() => {
          if (pending) return;
          setRefusal(null);
          run(false).catch(() => setRefusal(localRefusal("unavailable", t("signIn.passkeyUnavailable"))));
        }}
      >
        {pending ? t("signIn.pending") : t("signIn.withPasskey")}
      </button>
    </div>
  );
}

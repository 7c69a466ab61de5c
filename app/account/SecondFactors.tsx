"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import type { FactorSummary } from "@/lib/factors/store";
import { Field } from "../components/Field";
import { RefusalBanner, localRefusal, refusalFrom } from "../components/RefusalBanner";
import { useHydrated } from "../components/hydrated";
import { ConfirmItsYou } from "./ConfirmItsYou";
import { handled } from "../components/handled";
import { postForm, useFreshAction } from "./useFreshAction";

type Props = {
  formToken: string;
  email: string;
  summary: FactorSummary;
  /** An authenticator app being set up: its QR code (SVG made on the server) and its secret as text. */
  setup: { qrSvg: string; secretText: string } | null;
};

/**
 * The account's second step. Setting up, removing and new codes need a fresh authentication;
 * recovery codes are shown once, here, right after they are made, and never again.
 */
export function SecondFactors({ formToken, email, summary, setup }: Props) {
  const router = useRouter();
  const hydrated = useHydrated();
  const { pending, refusal, setRefusal, nowMs, confirming, setConfirming, freshly } = useFreshAction();
  const [codes, setCodes] = useState<string[] | null>(null);
  const [codeError, setCodeError] = useState<string | undefined>(undefined);

  const showCodes = async (res: Response) => {
    const body = (await res.json().catch(() => ({}))) as { recoveryCodes?: string[] | null };
    if (body.recoveryCodes) setCodes(body.recoveryCodes);
    router.refresh();
  };

  async function confirmTotp(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (pending) return;
    const code = String(new FormData(event.currentTarget).get("code") ?? "").trim();
    if (!/^\d{6}$/.test(code)) return setCodeError("Enter the 6 digits your authenticator app shows.");
    setCodeError(undefined);
    setRefusal(null);
    try {
      const res = await postForm("/api/account/totp/confirm", { formToken, code });
      if (!res.ok) return setRefusal(await refusalFrom(res));
      await showCodes(res);
    } catch {
      setRefusal(localRefusal("unavailable", "That did not work just now. Try again in a moment."));
    }
  }

  if (!hydrated) return <p className="hint">Setting up a second step needs JavaScript.</p>;

  return (
    <div className="second-factors">
      <RefusalBanner refusal={refusal} form="sign-in" nowMs={nowMs} testId="second-factor-error" />
      {confirming ? (
        <ConfirmItsYou
          formToken={formToken}
          email={email}
          hasPasskey={summary.passkeys > 0}
          reason={confirming.reason}
          onConfirmed={() => void confirming.resume()}
          onCancel={() => setConfirming(null)}
        />
      ) : null}
      {codes ? (
        <section className="recovery-codes" aria-labelledby="recovery-codes-heading">
          <h3 id="recovery-codes-heading">Your recovery codes</h3>
          <p className="banner warn" role="status">
            Save these now, somewhere only you can reach (a password manager, or on paper). Each works once, in place of a code. They are
            not shown again.
          </p>
          <ul data-testid="recovery-codes">
            {codes.map((code) => (
              <li key={code}>
                <code>{code}</code>
              </li>
            ))}
          </ul>
          <button type="button" className="primary" onClick={() => setCodes(null)}>
            I have saved them
          </button>
        </section>
      ) : null}

      <h3>Authenticator app</h3>
      {summary.totp ? (
        <>
          <p data-testid="totp-status">On: a code from your app is asked for after your password.</p>
          <button
            type="button"
            className="secondary"
            onClick={() =>
              handled(
                freshly("Removing your authenticator app needs you to confirm it's you.", () =>
                  postForm("/api/account/totp/remove", { formToken, json: "true" }),
                ),
              )
            }
          >
            Remove the authenticator app
          </button>
        </>
      ) : setup ? (
        <div className="totp-setup" data-testid="totp-setup">
          <p>Scan this QR code with your authenticator app, or type the key below into it. Then enter the code it shows.</p>
          {/* Our own SVG (lib qrcode), from our own URI: no user data but the account's email. */}
          <div
            className="qr"
            role="img"
            aria-label="QR code for your authenticator app"
            dangerouslySetInnerHTML={{ __html: setup.qrSvg }}
          />
          <p>
            Key: <code data-testid="totp-secret">{setup.secretText}</code>
          </p>
          <form onSubmit={(event) => handled(confirmTotp(event))} noValidate>
            <Field id="totp-code" label="Code" error={codeError}>
              {(aria) => <input id="totp-code" name="code" inputMode="numeric" autoComplete="one-time-code" maxLength={6} {...aria} />}
            </Field>
            <button type="submit" className="primary">
              Turn on
            </button>
            <button
              type="button"
              className="link"
              onClick={() =>
                handled(
                  freshly("Cancelling needs you to confirm it's you.", () =>
                    postForm("/api/account/totp/remove", { formToken, json: "true" }),
                  ),
                )
              }
            >
              Cancel
            </button>
          </form>
        </div>
      ) : (
        <>
          <p data-testid="totp-status">Off.</p>
          <button
            type="button"
            className="primary"
            aria-disabled={pending ? true : undefined}
            onClick={() => {
              if (!pending)
                handled(
                  freshly("Setting up an authenticator app needs you to confirm it's you.", () =>
                    postForm("/api/account/totp/setup", { formToken, json: "true" }),
                  ),
                );
            }}
          >
            Set up an authenticator app
          </button>
        </>
      )}

      <h3>Passkey after the password</h3>
      {summary.passkeys === 0 ? (
        <p className="hint">Add a passkey above to use it as a second step.</p>
      ) : (
        <>
          <p data-testid="passkey-second-factor-status">
            {summary.passkeyAfterPassword ? "On: your passkey is asked for after your password." : "Off."}
          </p>
          <button
            type="button"
            className="secondary"
            onClick={() =>
              handled(
                freshly(
                  "Changing your second step needs you to confirm it's you.",
                  () => postForm("/api/account/passkeys/second-factor", { formToken, on: summary.passkeyAfterPassword ? "false" : "true" }),
                  showCodes,
                ),
              )
            }
          >
            {summary.passkeyAfterPassword ? "Stop asking for a passkey after my password" : "Ask for a passkey after my password"}
          </button>
        </>
      )}

      {summary.due ? (
        <>
          <h3>Recovery codes</h3>
          <p data-testid="recovery-codes-left">
            {summary.recoveryCodesLeft} of 10 left. {summary.recoveryCodesLeft <= 3 ? "Get new ones before you run out." : ""}
          </p>
          <button
            type="button"
            className="secondary"
            onClick={() =>
              handled(
                freshly(
                  "New recovery codes need you to confirm it's you.",
                  () => postForm("/api/account/recovery-codes", { formToken }),
                  showCodes,
                ),
              )
            }
          >
            Get new codes
          </button>
        </>
      ) : null}
    </div>
  );
}

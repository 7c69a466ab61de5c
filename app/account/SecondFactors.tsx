"use client";

import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";
import type { FactorSummary } from "@/lib/factors/store";
import { Field } from "../components/Field";
import { useT } from "../components/Messages";
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
  setup: { uri: string; qrSvg: string; secretText: string } | null;
  /** How many recovery codes a set has. */
  recoveryCodeCount: number;
  /** Whether the account has a password: "Confirm it's you" offers it only then. */
  hasPassword: boolean;
};

/**
 * The account's second step. Setting up, removing and new codes need a fresh authentication;
 * recovery codes are shown once, here, right after they are made, and never again.
 */
export function SecondFactors({ formToken, email, summary, setup, recoveryCodeCount, hasPassword }: Props) {
  const t = useT();
  const f = (key: string, values?: Record<string, number>) => t(`account.factors.${key}`, values);
  const [copied, setCopied] = useState(false);
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
    if (!/^\d{6}$/.test(code)) return setCodeError(f("enterSixDigits"));
    setCodeError(undefined);
    setRefusal(null);
    try {
      const res = await postForm("/api/account/totp/confirm", { formToken, code });
      if (!res.ok) return setRefusal(await refusalFrom(res));
      await showCodes(res);
    } catch {
      setRefusal(localRefusal("unavailable", t("account.confirm.failed")));
    }
  }

  if (!hydrated) return <p className="hint">{f("needsJavaScript")}</p>;

  return (
    <div className="second-factors">
      <RefusalBanner refusal={refusal} form="sign-in" nowMs={nowMs} testId="second-factor-error" />
      {confirming ? (
        <ConfirmItsYou
          formToken={formToken}
          email={email}
          ways={{ password: hasPassword, passkey: summary.passkeys > 0 }}
          reason={confirming.reason}
          onConfirmed={() => void confirming.resume()}
          onCancel={() => setConfirming(null)}
        />
      ) : null}
      {codes ? (
        <section className="recovery-codes" aria-labelledby="recovery-codes-heading">
          <h3 id="recovery-codes-heading">{f("codesHeading")}</h3>
          <p className="banner warn" role="status">
            {f("codesSave")}
          </p>
          <ul data-testid="recovery-codes">
            {codes.map((code) => (
              <li key={code}>
                <code>{code}</code>
              </li>
            ))}
          </ul>
          <RecoveryCodeActions codes={codes} f={f} />
          <button type="button" className="primary" onClick={() => setCodes(null)}>
            {f("codesSaved")}
          </button>
        </section>
      ) : null}

      <h3>{f("app")}</h3>
      {summary.totp ? (
        <>
          <p data-testid="totp-status">{f("appOn")}</p>
          <button
            type="button"
            className="secondary"
            onClick={() => handled(freshly(f("removeAppReason"), () => postForm("/api/account/totp/remove", { formToken, json: "true" })))}
          >
            {f("removeApp")}
          </button>
        </>
      ) : setup ? (
        <div className="totp-setup" data-testid="totp-setup">
          <p>{f("scan")}</p>
          {/* Our own SVG (lib qrcode), from our own URI: no user data but the account's email. */}
          <div className="qr" role="img" aria-label={f("qrLabel")} dangerouslySetInnerHTML={{ __html: setup.qrSvg }} />
          {/* Shown on small screens only (globals.css): the phone that would scan the code is this one. */}
          <p className="totp-open">
            <a href={setup.uri}>{f("openInApp")}</a>
          </p>
          <p>
            {f("key")} <code data-testid="totp-secret">{setup.secretText}</code>
          </p>
          <p>
            <button
              type="button"
              className="secondary"
              // Handles its own failure (no clipboard permission) by saying nothing: the key is there to select.
              onClick={() => void navigator.clipboard.writeText(setup.secretText.replace(/\s/g, "")).then(() => setCopied(true), noop)}
            >
              {f("copyKey")}
            </button>{" "}
            <span role="status">{copied ? f("keyCopied") : ""}</span>
          </p>
          <form onSubmit={(event) => handled(confirmTotp(event))} noValidate>
            <Field id="totp-code" label={f("code")} error={codeError}>
              {(aria) => (
                <input id="totp-code" name="code" type="text" inputMode="numeric" autoComplete="one-time-code" maxLength={6} {...aria} />
              )}
            </Field>
            <button type="submit" className="primary">
              {f("turnOn")}
            </button>
            <button
              type="button"
              className="link"
              onClick={() => handled(freshly(f("cancelReason"), () => postForm("/api/account/totp/remove", { formToken, json: "true" })))}
            >
              {f("cancel")}
            </button>
          </form>
        </div>
      ) : (
        <>
          <p data-testid="totp-status">{f("off")}</p>
          <button
            type="button"
            className="primary"
            aria-disabled={pending ? true : undefined}
            onClick={() => {
              if (!pending) handled(freshly(f("setUpReason"), () => postForm("/api/account/totp/setup", { formToken, json: "true" })));
            }}
          >
            {f("setUp")}
          </button>
        </>
      )}

      <h3>{f("passkeyHeading")}</h3>
      {summary.passkeys === 0 ? (
        <p className="hint">{f("addPasskeyFirst")}</p>
      ) : (
        <>
          <p data-testid="passkey-second-factor-status">{summary.passkeyAfterPassword ? f("passkeyOn") : f("off")}</p>
          <button
            type="button"
            className="secondary"
            onClick={() =>
              handled(
                freshly(
                  f("changeReason"),
                  () => postForm("/api/account/passkeys/second-factor", { formToken, on: summary.passkeyAfterPassword ? "false" : "true" }),
                  showCodes,
                ),
              )
            }
          >
            {summary.passkeyAfterPassword ? f("stopPasskey") : f("askPasskey")}
          </button>
        </>
      )}

      {summary.due ? (
        <>
          <h3>{f("recoveryHeading")}</h3>
          <p data-testid="recovery-codes-left">
            {f("codesLeft", { left: summary.recoveryCodesLeft, total: recoveryCodeCount })}
            {summary.recoveryCodesLeft <= 3 ? ` ${f("runningOut")}` : ""}
          </p>
          <button
            type="button"
            className="secondary"
            onClick={() => handled(freshly(f("newCodesReason"), () => postForm("/api/account/recovery-codes", { formToken }), showCodes))}
          >
            {f("newCodes")}
          </button>
        </>
      ) : null}
    </div>
  );
}

function noop() {}

/**
 * "Copy" and "Download" for a set of recovery codes just made: the clipboard, or a text file saved
 * by the browser (made here from the codes on the page; nothing is asked of the server again).
 */
function RecoveryCodeActions({ codes, f }: { codes: string[]; f: (key: string) => string }) {
  const [copied, setCopied] = useState<"copied" | "failed" | null>(null);
  const text = `${f("codesFileTitle")}\n\n${codes.join("\n")}\n`;
  return (
    <p className="actions">
      <button
        type="button"
        className="secondary"
        onClick={() => {
          navigator.clipboard.writeText(text).then(
            () => setCopied("copied"),
            () => setCopied("failed"),
          );
        }}
      >
        {f("codesCopy")}
      </button>{" "}
      <button
        type="button"
        className="secondary"
        onClick={() => {
          const url = URL.createObjectURL(new Blob([text], { type: "text/plain;charset=utf-8" }));
          const link = document.createElement("a");
          link.href = url;
          link.download = "recovery-codes.txt";
          link.click();
          // The click has started the download; the URL is not needed after it.
          setTimeout(() => URL.revokeObjectURL(url), 0);
        }}
      >
        {f("codesDownload")}
      </button>{" "}
      <span role="status" data-testid="recovery-codes-copied">
        {copied ? f(copied === "copied" ? "codesCopied" : "codesCopyFailed") : ""}
      </span>
    </p>
  );
}

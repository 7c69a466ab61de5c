"use client";

import { useRef, useState, type FormEvent } from "react";
import { secondsLeft } from "@/lib/ui/refusal-banner";
import { Field } from "./Field";
import { useT } from "./Messages";
import { assertWithPasskey } from "./passkey-ceremony";
import { handled } from "./handled";
import { RefusalBanner, localRefusal, refusalFrom, useRefusalClock, type Refusal } from "./RefusalBanner";

export type SecondStepMethod = "totp" | "passkey" | "recovery_code" | "email_code";

type Mode = "totp" | "recovery_code" | "email_code";

/** What each way of answering asks for, a key of the `secondStep` catalogue. */
const HINTS: Record<Mode, string> = {
  totp: "hintTotp",
  recovery_code: "hintRecoveryCode",
  // Shown alike after a wrong password (the server mails nothing then), so it promises no email.
  email_code: "hintEmailCode",
};

type Props = {
  methods: SecondStepMethod[];
  callbackPath: string;
  /** The step is passed: a sign-in goes on to `callbackPath`; "Confirm it's you" carries on. */
  onDone: () => void;
  /** The pending sign-in is gone (expired, used, out of tries): back to the password. */
  onRestart: () => void;
  /** Days "Remember this browser" lasts, as the server offered it; absent or 0: not offered. */
  rememberDays?: number | undefined;
  /** Mailbox first: the code was asked before the password, which is checked after it. */
  mailboxFirst?: boolean;
  /** Mailbox first, the right code: this browser is the account's now; the password goes next. */
  onMailboxProved?: () => void;
};

const firstMode = (methods: SecondStepMethod[]): Mode =>
  methods.includes("email_code") ? "email_code" : methods.includes("totp") ? "totp" : "recovery_code";

const post = (path: string, body: unknown) =>
  fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

/**
 * The second step after a right password: the code of the authenticator app (a field labelled
 * "Code"), with "Use your passkey" and "Use a recovery code" as the alternatives the account has;
 * or, for a new device of an account under attack, the code emailed to the owner (also "Code"),
 * with "Resend code" and "Sign in again". No session exists until the server accepts one of them.
 */
export function SecondStep({
  methods: first,
  callbackPath,
  onDone,
  onRestart,
  rememberDays: offered,
  mailboxFirst = false,
  onMailboxProved,
}: Props) {
  // A confirmed new device of an account with a second factor is asked the factor next.
  const t = useT();
  const [methods, setMethods] = useState(first);
  const [mode, setMode] = useState<Mode>(firstMode(first));
  const digits = mode !== "recovery_code";
  const [pending, setPending] = useState(false);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [expired, setExpired] = useState(false);
  // "Resend code" answered: said alike whether a code went out (only the owner's mailbox tells).
  const [resent, setResent] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const [rememberDays, setRememberDays] = useState(offered ?? 0);
  const [remember, setRemember] = useState(false);
  // A recovery code or a mailed code never remembers the browser: the box goes with the app's code (and the passkey beside it).
  const remembering = rememberDays > 0 && mode === "totp";
  const nowMs = useRefusalClock(refusal);
  const waiting = secondsLeft(refusal, nowMs) > 0;

  async function answered(res: Response) {
    if (res.ok) {
      const passed = (await res
        .clone()
        .json()
        .catch(() => ({}))) as { status?: string };
      return passed.status === "mailbox_proved" && onMailboxProved ? onMailboxProved() : onDone();
    }
    const next = (await res
      .clone()
      .json()
      .catch(() => ({}))) as { error?: string; methods?: SecondStepMethod[]; rememberDays?: number };
    if (res.status === 401 && next.error === "mfa_required" && next.methods) {
      setMethods(next.methods);
      setRememberDays(next.rememberDays ?? 0);
      setMode(firstMode(next.methods));
      setRefusal(null);
      if (input.current) {
        input.current.value = "";
        input.current.focus();
      }
      return;
    }
    const refused = await refusalFrom(res);
    if (refused.error === "second_step_invalid") setExpired(true);
    setRefusal(refused);
    if (input.current) {
      input.current.value = "";
      input.current.focus();
    }
  }

  async function resendCode() {
    if (pending) return;
    setRefusal(null);
    setResent(false);
    setPending(true);
    try {
      const res = await post("/api/auth/second-step/resend", {});
      if (res.status === 202) {
        setResent(true);
        input.current?.focus();
        return;
      }
      const refused = await refusalFrom(res);
      if (refused.error === "second_step_invalid") setExpired(true);
      setRefusal(refused);
    } catch {
      setRefusal(localRefusal("unavailable", t("secondStep.unavailable")));
    } finally {
      setPending(false);
    }
  }

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (pending || waiting) return;
    const value = String(new FormData(event.currentTarget).get("answer") ?? "").trim();
    if (value === "") {
      setRefusal(localRefusal("invalid_input", digits ? t("secondStep.enterCode") : t("secondStep.enterRecoveryCode")));
      input.current?.focus();
      return;
    }
    setRefusal(null);
    setResent(false);
    setPending(true);
    try {
      await answered(
        await post(
          "/api/auth/second-step",
          digits
            ? { code: value, callbackUrl: callbackPath, ...(remembering && remember ? { remember: true } : {}) }
            : { recoveryCode: value, callbackUrl: callbackPath },
        ),
      );
    } catch {
      setRefusal(localRefusal("unavailable", t("secondStep.unavailable")));
    } finally {
      setPending(false);
    }
  }

  async function withPasskey() {
    if (pending) return;
    setRefusal(null);
    setPending(true);
    try {
      const res = await assertWithPasskey(
        () => post("/api/auth/second-step/passkey/options", {}),
        (credential) =>
          post("/api/auth/second-step/passkey", {
            credential,
            callbackUrl: callbackPath,
            ...(remembering && remember ? { remember: true } : {}),
          }),
      );
      if (res === "cancelled") return setRefusal(localRefusal("passkey_invalid", t("secondStep.noPasskeyUsed")));
      await answered(res);
    } catch {
      setRefusal(localRefusal("unavailable", t("secondStep.unavailable")));
    } finally {
      setPending(false);
    }
  }

  return (
    <div className="second-step" data-testid="second-step">
      <h2>{t(mode === "email_code" ? "secondStep.headingDevice" : "secondStep.headingFactor")}</h2>
      {/* The code field's description: a screen reader that lands in the field hears what to enter and why. */}
      <p className="hint" id="second-step-explained">
        {t(mailboxFirst && mode === "email_code" ? "secondStep.hintMailboxFirst" : `secondStep.${HINTS[mode]}`)}
      </p>
      <RefusalBanner refusal={refusal} form="sign-in" nowMs={nowMs} testId="second-step-error" />
      {resent && !refusal ? (
        <p className="banner ok" role="status" data-testid="code-resent">
          {t("secondStep.resent")}
        </p>
      ) : null}
      {expired ? (
        <button type="button" className="primary" onClick={onRestart}>
          {t("secondStep.signInAgain")}
        </button>
      ) : (
        <>
          <form onSubmit={(event) => handled(onSubmit(event))} noValidate>
            <Field id="second-step-answer" label={t(digits ? "secondStep.code" : "secondStep.recoveryCode")}>
              {(aria) => (
                <input
                  key={mode}
                  id="second-step-answer"
                  ref={input}
                  name="answer"
                  type="text"
                  autoFocus
                  autoComplete="one-time-code"
                  {...(digits ? { inputMode: "numeric" as const, pattern: "[0-9]*", maxLength: 6 } : { maxLength: 11, spellCheck: false })}
                  {...aria}
                  aria-describedby={["second-step-explained", aria["aria-describedby"]].filter(Boolean).join(" ")}
                />
              )}
            </Field>
            {remembering ? (
              <>
                <p className="checkbox">
                  <input
                    id="remember-browser"
                    type="checkbox"
                    name="remember"
                    aria-describedby="remember-browser-hint"
                    checked={remember}
                    onChange={(event) => setRemember(event.target.checked)}
                  />
                  <label htmlFor="remember-browser">{t("secondStep.remember", { days: rememberDays })}</label>
                </p>
                <p className="hint" id="remember-browser-hint">
                  {t("secondStep.rememberHint")}
                </p>
              </>
            ) : null}
            <button type="submit" className="primary" aria-disabled={pending || waiting ? true : undefined}>
              {t(pending ? "secondStep.pending" : "secondStep.submit")}
            </button>
          </form>
          <div className="second-step-alternatives">
            {methods.includes("passkey") ? (
              <button type="button" className="secondary" onClick={() => handled(withPasskey())}>
                {t("secondStep.usePasskey")}
              </button>
            ) : null}
            {mode === "totp" && methods.includes("recovery_code") ? (
              <button type="button" className="link" onClick={() => setMode("recovery_code")}>
                {t("secondStep.useRecoveryCode")}
              </button>
            ) : null}
            {mode === "recovery_code" && methods.includes("totp") ? (
              <button type="button" className="link" onClick={() => setMode("totp")}>
                {t("secondStep.useAuthenticator")}
              </button>
            ) : null}
            {mode === "email_code" ? (
              <>
                <button type="button" className="secondary" onClick={() => handled(resendCode())}>
                  {t("secondStep.resend")}
                </button>
                <button type="button" className="link" onClick={onRestart}>
                  {t("secondStep.signInAgain")}
                </button>
              </>
            ) : null}
          </div>
        </>
      )}
    </div>
  );
}

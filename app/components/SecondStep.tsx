"use client";

import { useRef, useState, type FormEvent } from "react";
import { secondsLeft } from "@/lib/ui/refusal";
import { Field } from "./Field";
import { assertWithPasskey } from "./passkey-ceremony";
import { handled } from "./handled";
import { RefusalBanner, localRefusal, refusalFrom, useRefusalClock, type Refusal } from "./RefusalBanner";

export type SecondStepMethod = "totp" | "passkey" | "recovery_code" | "email_code";

type Mode = "totp" | "recovery_code" | "email_code";

const HINTS: Record<Mode, string> = {
  totp: "Your password was right. Enter the 6-digit code your authenticator app shows for this account.",
  recovery_code: "Your password was right. Enter one of the recovery codes you saved; each works once.",
  // Shown alike after a wrong password (the server mails nothing then), so it promises no email.
  email_code:
    "This device is new to the account. If the password was right, we emailed a 6-digit code to the account's address. Enter it to finish signing in here. No email after a few minutes? Check the password and sign in again.",
};

type Props = {
  methods: SecondStepMethod[];
  callbackPath: string;
  /** The step is passed: a sign-in goes on to `callbackPath`; "Confirm it's you" carries on. */
  onDone: () => void;
  /** The pending sign-in is gone (expired, used, out of tries): back to the password. */
  onRestart: () => void;
};

const firstMode = (methods: SecondStepMethod[]): Mode =>
  methods.includes("email_code") ? "email_code" : methods.includes("totp") ? "totp" : "recovery_code";

const post = (path: string, body: unknown) =>
  fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });

/**
 * The second step after a right password: the code of the authenticator app (a field labelled
 * "Code"), with "Use your passkey" and "Use a recovery code" as the alternatives the account has;
 * or, for a new device of an account under attack, the code emailed to the owner (also "Code").
 * No session exists until the server accepts one of them.
 */
export function SecondStep({ methods: first, callbackPath, onDone, onRestart }: Props) {
  // A confirmed new device of an account with a second factor is asked the factor next.
  const [methods, setMethods] = useState(first);
  const [mode, setMode] = useState<Mode>(firstMode(first));
  const digits = mode !== "recovery_code";
  const [pending, setPending] = useState(false);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [expired, setExpired] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const nowMs = useRefusalClock(refusal);
  const waiting = secondsLeft(refusal, nowMs) > 0;

  async function answered(res: Response) {
    if (res.ok) return onDone();
    const next = (await res
      .clone()
      .json()
      .catch(() => ({}))) as { error?: string; methods?: SecondStepMethod[] };
    if (res.status === 401 && next.error === "mfa_required" && next.methods) {
      setMethods(next.methods);
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

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (pending || waiting) return;
    const value = String(new FormData(event.currentTarget).get("answer") ?? "").trim();
    if (value === "") {
      setRefusal(localRefusal("invalid_input", digits ? "Enter the 6-digit code." : "Enter a recovery code."));
      input.current?.focus();
      return;
    }
    setRefusal(null);
    setPending(true);
    try {
      await answered(
        await post(
          "/api/auth/second-step",
          digits ? { code: value, callbackUrl: callbackPath } : { recoveryCode: value, callbackUrl: callbackPath },
        ),
      );
    } catch {
      setRefusal(localRefusal("unavailable", "That did not work just now. Try again in a moment."));
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
        (credential) => post("/api/auth/second-step/passkey", { credential, callbackUrl: callbackPath }),
      );
      if (res === "cancelled") return setRefusal(localRefusal("passkey_invalid", "No passkey was used. Try again, or enter a code."));
      await answered(res);
    } catch {
      setRefusal(localRefusal("unavailable", "That did not work just now. Try again in a moment."));
    } finally {
      setPending(false);
    }
  }

  return (
    <div className="second-step" data-testid="second-step">
      <h2>{mode === "email_code" ? "Confirm this device" : "One more step"}</h2>
      <p className="hint">{HINTS[mode]}</p>
      <RefusalBanner refusal={refusal} form="sign-in" nowMs={nowMs} testId="second-step-error" />
      {expired ? (
        <button type="button" className="primary" onClick={onRestart}>
          Sign in again
        </button>
      ) : (
        <>
          <form onSubmit={(event) => handled(onSubmit(event))} noValidate>
            <Field id="second-step-answer" label={digits ? "Code" : "Recovery code"}>
              {(aria) => (
                <input
                  key={mode}
                  id="second-step-answer"
                  ref={input}
                  name="answer"
                  autoFocus
                  autoComplete="one-time-code"
                  {...(digits ? { inputMode: "numeric" as const, pattern: "[0-9]*", maxLength: 6 } : { maxLength: 11, spellCheck: false })}
                  {...aria}
                />
              )}
            </Field>
            <button type="submit" className="primary" aria-disabled={pending || waiting ? true : undefined}>
              {pending ? "Checking…" : "Verify"}
            </button>
          </form>
          <div className="second-step-alternatives">
            {methods.includes("passkey") ? (
              <button type="button" className="secondary" onClick={() => handled(withPasskey())}>
                Use your passkey
              </button>
            ) : null}
            {mode === "totp" && methods.includes("recovery_code") ? (
              <button type="button" className="link" onClick={() => setMode("recovery_code")}>
                Use a recovery code
              </button>
            ) : null}
            {mode === "recovery_code" && methods.includes("totp") ? (
              <button type="button" className="link" onClick={() => setMode("totp")}>
                Use your authenticator app
              </button>
            ) : null}
            {mode === "email_code" ? (
              <button type="button" className="link" onClick={onRestart}>
                Sign in again
              </button>
            ) : null}
          </div>
        </>
      )}
    </div>
  );
}

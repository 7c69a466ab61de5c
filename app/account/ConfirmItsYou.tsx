"use client";

import { useRouter } from "next/navigation";
import { Suspense, lazy, useRef, useState, type FormEvent } from "react";
import { AltchaField, type AltchaHandle } from "../components/AltchaField";
import { assertWithPasskey } from "../components/passkey-ceremony";
import { PasswordField } from "../components/PasswordInput";
import { RefusalBanner, localRefusal, refusalFrom, useRefusalClock, type Refusal } from "../components/RefusalBanner";
import { useHydrated } from "../components/hydrated";
import { useT } from "../components/Messages";
import type { SecondStepMethod } from "../components/SecondStep";
// Fetched only when a right password asks for it: the page itself does not carry it.
const SecondStep = lazy(() => import("../components/SecondStep").then((module) => ({ default: module.SecondStep })));
import { handled } from "../components/handled";

/**
 * How this account can confirm it's you: its password, if it has one (an account started with a
 * passkey has none: decision 39), and its passkeys. Only those are offered.
 */
export type ConfirmWays = { password: boolean; passkey: boolean };

type Props = {
  formToken: string;
  email: string;
  ways: ConfirmWays;
  /** What the person was doing, which carries on once they have confirmed. */
  reason: string;
  onConfirmed(): void;
  onCancel?: () => void;
};

const form = (fields: Record<string, string>) => ({
  method: "POST",
  headers: { "Content-Type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields),
});

/**
 * "Confirm it's you": the password again (through the sign-in's limits, proof of work and lockout)
 * or one of the account's passkeys. What changes how the account is protected asks for it when
 * the last proof is more than 10 minutes old, then carries on.
 */
export function ConfirmItsYou({ formToken, email, ways, reason, onConfirmed, onCancel }: Props) {
  const t = useT();
  const altcha = useRef<AltchaHandle>(null);
  const password = useRef<HTMLInputElement>(null);
  const [pending, setPending] = useState(false);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [error, setError] = useState<string | undefined>(undefined);
  const nowMs = useRefusalClock(refusal);
  const hydrated = useHydrated();
  // An account with no password is offered its passkeys only; with neither (it cannot happen: the
  // last way in is never removed) the password form stays, and whatever is typed is a wrong password.
  const withPassword = ways.password || !ways.passkey;
  // An account with a second step asks for it after the password here too.
  const [secondStep, setSecondStep] = useState<SecondStepMethod[] | null>(null);

  async function confirmWithPassword(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (pending) return;
    const value = password.current?.value ?? "";
    setRefusal(null);
    if (!value) {
      setError(t("account.confirm.enterPassword"));
      password.current?.focus();
      return;
    }
    setError(undefined);
    setPending(true);
    try {
      const res = await fetch(
        "/api/account/reauthenticate",
        form({ formToken, password: value, altcha: (await altcha.current?.payload()) ?? "", json: "true" }),
      );
      if (res.ok) return onConfirmed();
      if (res.status === 401) {
        const body = (await res
          .clone()
          .json()
          .catch(() => ({}))) as { error?: string; methods?: SecondStepMethod[] };
        if (body.error === "mfa_required") return setSecondStep(body.methods ?? []);
      }
      setRefusal(await refusalFrom(res));
      if (password.current) {
        password.current.value = "";
        password.current.focus();
      }
    } catch {
      setRefusal(localRefusal("unavailable", t("account.confirm.unavailable")));
    } finally {
      altcha.current?.reset();
      setPending(false);
    }
  }

  async function withPasskey() {
    if (pending) return;
    setRefusal(null);
    setPending(true);
    try {
      const res = await assertWithPasskey(
        () => fetch("/api/account/passkeys/options", form({ formToken, purpose: "reauthenticate" })),
        (credential) => fetch("/api/account/reauthenticate/passkey", form({ formToken, credential: JSON.stringify(credential) })),
      );
      if (res === "cancelled")
        return setRefusal(
          localRefusal("passkey_invalid", t(withPassword ? "account.confirm.noPasskeyUsed" : "account.confirm.noPasskeyUsedOnly")),
        );
      if (res.ok) return onConfirmed();
      setRefusal(await refusalFrom(res));
    } catch {
      setRefusal(localRefusal("unavailable", t("account.confirm.unavailable")));
    } finally {
      setPending(false);
    }
  }

  const cancel = onCancel ? (
    <button type="button" className="link" onClick={onCancel}>
      {t("account.confirm.cancel")}
    </button>
  ) : null;

  if (secondStep) {
    return (
      <section className="confirm" aria-labelledby="confirm-heading" data-testid="confirm-its-you">
        <h3 id="confirm-heading">{t("account.confirm.heading")}</h3>
        <Suspense fallback={null}>
          <SecondStep methods={secondStep} callbackPath="/account" onDone={onConfirmed} onRestart={() => setSecondStep(null)} />
        </Suspense>
      </section>
    );
  }

  return (
    <section className="confirm" aria-labelledby="confirm-heading" data-testid="confirm-its-you">
      <h3 id="confirm-heading">{t("account.confirm.heading")}</h3>
      <p className="hint">{reason}</p>
      <RefusalBanner refusal={refusal} form="sign-in" nowMs={nowMs} testId="confirm-error" />
      {withPassword ? (
        <form onSubmit={(event) => handled(confirmWithPassword(event))} noValidate data-hydrated={hydrated}>
          <input type="text" name="username" autoComplete="username" value={email} readOnly hidden />
          <PasswordField
            id="confirm-password"
            label={t("account.confirm.password")}
            error={error}
            inputRef={password}
            name="password"
            autoComplete="current-password"
            required
            toggle={hydrated}
            hideKey={0}
          />
          <AltchaField ref={altcha} />
          <button type="submit" className="primary" aria-disabled={pending ? true : undefined}>
            {pending ? t("account.confirm.pending") : t("account.confirm.submit")}
          </button>
          {ways.passkey ? (
            <button type="button" className="secondary" onClick={() => handled(withPasskey())}>
              {t("account.confirm.usePasskey")}
            </button>
          ) : null}
          {cancel}
        </form>
      ) : (
        <div className="actions" data-hydrated={hydrated}>
          <button type="button" className="primary" aria-disabled={pending ? true : undefined} onClick={() => handled(withPasskey())}>
            {pending ? t("account.confirm.pending") : t("account.confirm.usePasskeyOnly")}
          </button>
          {cancel}
        </div>
      )}
    </section>
  );
}

/**
 * The card the account page shows after a plain form asked for a fresh authentication
 * (`?notice=confirm_first`): confirming comes back to the page, which says what to press again.
 */
export function ConfirmFirstCard(props: Omit<Props, "onConfirmed" | "onCancel" | "reason">) {
  const t = useT();
  const router = useRouter();
  return (
    <div className="card">
      <ConfirmItsYou
        {...props}
        reason={t("account.confirm.firstReason")}
        onConfirmed={() => {
          router.push("/account?notice=reauthenticated");
          router.refresh();
        }}
      />
    </div>
  );
}

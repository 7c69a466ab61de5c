"use client";

import { useRich, useT, type T } from "./Messages";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { Suspense, lazy, useEffect, useRef, useState, useSyncExternalStore } from "react";
import { useHydrated } from "./hydrated";
import { useFocusFirstEmpty } from "./form-helpers";
import { flushSync } from "react-dom";
import { PASSWORD_LIMITS, checkNewPassword } from "@/lib/ui/password-checks";
import { PasswordField } from "./PasswordInput";
import { PasswordStrength } from "./PasswordStrength";
import { EMAIL_LINKS, type EmailLinkPurpose } from "./email-links";
import { useGuardedSubmit, type Send } from "./guarded-submit";
import { RefusalBanner, refusalFrom } from "./RefusalBanner";
import { carryEmailToSignIn } from "./sign-in-email";
import type { SecondStepMethod } from "./SecondStep";
// Fetched only when a right password asks for it: the page itself does not carry it.
const SecondStep = lazy(() => import("./SecondStep").then((module) => ({ default: module.SecondStep })));

/** The reset page's new password and the verification page's registration password. */
const AUTOCOMPLETE = { new: "new-password", current: "current-password" } as const;

/** The token this page was opened with, kept once read: the address bar no longer has it. */
let captured: { pathname: string; token: string } | undefined;

/**
 * The link's token, read from the fragment the first time and from `captured` afterwards. Strict
 * Mode runs effects twice in development and React may render again after the fragment was
 * removed; both must still see the token, so it is never read from the address bar only.
 */
function linkToken(): string | null {
  const fresh = new URLSearchParams(window.location.hash.slice(1)).get("token");
  if (fresh) captured = { pathname: window.location.pathname, token: fresh };
  return captured?.pathname === window.location.pathname ? captured.token : null;
}

function noSubscription(): () => void {
  return () => {};
}

/**
 * The token of the emailed link this page was opened with (undefined in the server's HTML and
 * during hydration: the fragment exists only in the browser), removed from the address bar once held.
 */
export function useLinkToken(): string | null | undefined {
  const token = useSyncExternalStore(noSubscription, linkToken, () => undefined);
  useEffect(() => {
    if (token && window.location.hash) window.history.replaceState(null, "", window.location.pathname + window.location.search);
  }, [token]);
  return token;
}

/** A same-origin path the server chose (`/account`), or undefined for anything else. */
export function samePath(value: unknown): string | undefined {
  return typeof value === "string" && value.startsWith("/") && !value.startsWith("//") && !value.startsWith("/\\") ? value : undefined;
}

/**
 * The form of the page an emailed link opens, for each purpose (./email-links.ts). Opening it
 * does nothing (mail scanners open links): the person presses the button, which POSTs the token.
 * The token rides in the URL's fragment, which browsers never send to a server or in a Referer;
 * it is read here and removed from the address bar.
 */
export function EmailLinkForm({ purpose }: { purpose: EmailLinkPurpose }) {
  const { endpoint, noScriptForm, done, password: asks, preview } = EMAIL_LINKS[purpose];
  const t = useT();
  const rich = useRich();
  const router = useRouter();
  const passwordInput = useRef<HTMLInputElement>(null);
  const hydrated = useHydrated();
  const token = useLinkToken();
  const submit = useGuardedSubmit(t("messages.unavailable"));
  const { refusal } = submit;
  const [submits, setSubmits] = useState(0);
  const [passwordError, setPasswordError] = useState<string | undefined>(undefined);
  const formRef = useRef<HTMLFormElement>(null);
  useFocusFirstEmpty(formRef, hydrated && typeof token === "string");
  const { linked, settled } = useLinkAccount(preview, token);
  const account = linked?.account ?? null;
  // The reset's rule is the account's: 8 characters while another factor stays, else 15. Until the
  // preview has said, the stricter one, so a password the server would refuse never reads as fine.
  const [removingPasskeys, setRemovingPasskeys] = useState(false);
  const keepsOtherFactor = linked?.hasOtherFactor === true && !removingPasskeys;
  const minLength = keepsOtherFactor ? PASSWORD_LIMITS.minWithOtherFactor : PASSWORD_LIMITS.min;
  // The confirmation link's password was right and the account has a second step: it asks next.
  const [secondStep, setSecondStep] = useState<SecondStepMethod[] | null>(null);

  /** Reads the form and shows its own errors; the request to send, or nothing when it stops here. */
  function check(form: HTMLFormElement): Send | undefined {
    if (!token) return;
    const data = new FormData(form);
    const password = asks ? String(data.get("password") ?? "") : undefined;
    // The reset page's "Also remove every passkey": sent only by that page, as a boolean.
    const removePasskeys = asks === "new" ? data.get("removePasskeys") === "on" : undefined;
    const problem =
      password === undefined
        ? undefined
        : asks === "new"
          ? checkNewPassword(password, undefined, t, minLength)
          : password
            ? undefined
            : t("recovery.link.enterChosenPassword");
    flushSync(() => {
      setPasswordError(problem);
      setSubmits((n) => n + 1);
    });
    if (problem) {
      passwordInput.current?.focus();
      return;
    }
    return async () => {
      const res = await fetch(endpoint, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(password === undefined ? { token } : { token, password, ...(removePasskeys ? { removePasskeys } : {}) }),
      });
      if (res.ok) {
        const { email, redirectTo } = (await res.json().catch(() => ({}))) as { email?: string; redirectTo?: unknown };
        // The server signed the person in (its answer set the session cookie): a full navigation,
        // so the next page's server components see the cookie. Without redirectTo, sign in next.
        const next = samePath(redirectTo);
        if (next) window.location.assign(next);
        else {
          // The address goes with this tab, not in the URL (history, logs, Referer).
          if (email) carryEmailToSignIn(email);
          router.push(`/sign-in?done=${done}`);
        }
        return "leaving";
      }
      const body = (await res
        .clone()
        .json()
        .catch(() => ({}))) as { fields?: { password?: string }; error?: string; methods?: SecondStepMethod[] };
      if (body.error === "mfa_required") {
        setSecondStep(body.methods ?? []);
      } else if (body.fields?.password) {
        flushSync(() => setPasswordError(body.fields?.password));
        passwordInput.current?.focus();
      } else {
        submit.setRefusal(await refusalFrom(res));
      }
    };
  }

  if (secondStep) {
    return (
      <Suspense fallback={null}>
        <SecondStep
          methods={secondStep}
          callbackPath="/account"
          // A full navigation, so the account page sees the new session cookie.
          onDone={() => window.location.assign(new URL("/account", window.location.href).href)}
          onRestart={() => router.push("/sign-in")}
        />
      </Suspense>
    );
  }
  if (linked?.confirmed) {
    // An old confirmation email opened again: nothing left to confirm, so no password to ask for.
    return (
      <p className="banner ok" role="status" data-testid="link-confirmed">
        {rich("recovery.link.alreadyConfirmed", {}, { signIn: (chunks) => <Link href="/sign-in">{chunks}</Link> })}
      </p>
    );
  }
  if (token === null) {
    return (
      <p className="banner error" role="alert" data-testid="link-missing">
        {rich("recovery.link.incomplete", {}, { link: (chunks) => <Link href="/forgot-password">{chunks}</Link> })}
      </p>
    );
  }
  return (
    <>
      {account ? (
        <p data-testid="link-account">{rich("recovery.link.forAccount", { account }, { name: (chunks) => <strong>{chunks}</strong> })}</p>
      ) : null}
      <RefusalBanner refusal={refusal} form="recovery" nowMs={submit.nowMs} testId="link-error" />
      {refusal?.error === "invalid_token" ? (
        <p>
          {rich(
            "recovery.link.askNew",
            {},
            {
              forgot: (chunks) => <Link href="/forgot-password">{chunks}</Link>,
              signIn: (chunks) => <Link href="/sign-in">{chunks}</Link>,
            },
          )}
        </p>
      ) : null}
      <form
        ref={formRef}
        onSubmit={(event) => submit.handle(event, check)}
        noValidate
        method="post"
        action={`/api/no-script/${noScriptForm}`}
        // Ready once the page has said all it will about the link: the preview's answer puts the
        // account's line above the form (and may add the passkey box above the button), which would
        // move the button under a press already aimed at it.
        data-hydrated={hydrated && token !== undefined && settled}
      >
        {asks ? (
          <>
            <PasswordField
              id="link-password"
              label={asks === "new" ? t("recovery.link.newPassword") : t("forms.password")}
              hint={asks === "new" ? newPasswordHint(linked, minLength, t) : t("recovery.link.currentPasswordHint")}
              error={passwordError}
              inputRef={passwordInput}
              name="password"
              autoComplete={AUTOCOMPLETE[asks]}
              required
              toggle={hydrated}
              hideKey={submits}
            />
            {asks === "new" ? (
              <>
                <PasswordStrength field="password" minLength={minLength} fieldError={passwordError} />
                {/* Only an account with a passkey has any to remove. */}
                {linked?.hasPasskey ? (
                  <>
                    <p className="checkbox">
                      <input
                        id="remove-passkeys"
                        type="checkbox"
                        name="removePasskeys"
                        aria-describedby="remove-passkeys-hint"
                        checked={removingPasskeys}
                        onChange={(event) => setRemovingPasskeys(event.target.checked)}
                      />
                      <label htmlFor="remove-passkeys">{t("recovery.link.removePasskeys")}</label>
                    </p>
                    <p className="hint" id="remove-passkeys-hint">
                      {t("recovery.link.removePasskeysHint")}
                    </p>
                  </>
                ) : null}
              </>
            ) : null}
          </>
        ) : null}
        <button type="submit" className="primary" aria-disabled={submit.blocked ? true : undefined}>
          {submit.pending ? t(`recovery.${purpose}.pending`) : t(`recovery.${purpose}.submit`)}
        </button>
      </form>
    </>
  );
}

/** What a link's preview says: the account, masked; the reset's also what decides its password rule. */
type LinkedAccount = { account?: string; hasPasskey?: boolean; hasOtherFactor?: boolean; confirmed?: boolean };

/** The new password's hint, in the account's rule once the preview has said it. */
function newPasswordHint(linked: LinkedAccount | null, minLength: number, t: T): string {
  const limits = { min: minLength, max: PASSWORD_LIMITS.max, minWithOtherFactor: PASSWORD_LIMITS.minWithOtherFactor };
  if (linked?.hasPasskey) return t("recovery.link.newPasswordHint", { ...limits, min: PASSWORD_LIMITS.min });
  return t(linked?.hasOtherFactor ? "recovery.link.newPasswordHintSecondStep" : "recovery.link.newPasswordHintPasswordOnly", limits);
}

/**
 * The masked account a link is for (or that its address is confirmed), once `endpoint` has said
 * (nothing on a bad link: the button tells); `settled` once there is nothing more to wait for.
 */
function useLinkAccount(
  endpoint: string | undefined,
  token: string | null | undefined,
): { linked: LinkedAccount | null; settled: boolean } {
  // undefined until the answer (or its failure) is in.
  const [answer, setAnswer] = useState<LinkedAccount | null | undefined>(undefined);
  useEffect(() => {
    if (!endpoint || !token) return;
    let current = true;
    // Fire and forget: a failed lookup (caught) only leaves the account unnamed.
    void fetch(endpoint, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token }) })
      .then(async (res) => (res.ok ? ((await res.json()) as LinkedAccount) : undefined))
      .catch(() => undefined)
      .then((named) => {
        if (current) setAnswer(named ?? null);
      });
    return () => {
      current = false;
    };
  }, [endpoint, token]);
  return { linked: answer ?? null, settled: !endpoint || !token || answer !== undefined };
}

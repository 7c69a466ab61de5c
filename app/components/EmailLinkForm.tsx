"use client";

import { useT } from "./Messages";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { Suspense, lazy, useEffect, useRef, useState, useSyncExternalStore, type FormEvent } from "react";
import { useHydrated } from "./hydrated";
import { useFocusFirstEmpty } from "./form-helpers";
import { handled } from "./handled";
import { flushSync } from "react-dom";
import { PASSWORD_LIMITS, checkNewPassword } from "@/lib/ui/password-checks";
import { secondsLeft } from "@/lib/ui/refusal";
import { Field } from "./Field";
import { PasswordInput } from "./PasswordInput";
import { PasswordStrength } from "./PasswordStrength";
import { RefusalBanner, localRefusal, refusalFrom, useRefusalClock, type Refusal } from "./RefusalBanner";
import type { SecondStepMethod } from "./SecondStep";
// Fetched only when a right password asks for it: the page itself does not carry it.
const SecondStep = lazy(() => import("./SecondStep").then((module) => ({ default: module.SecondStep })));
import { UNAVAILABLE } from "@/lib/ui/messages";

type Props = {
  /** The API route that uses the link. */
  endpoint: "/api/email/verify" | "/api/unlock" | "/api/password/reset";
  /** The no-script route the form posts to before hydration (it only redirects back). */
  noScriptForm: "verify-email" | "unlock" | "reset-password";
  action: string;
  pendingAction: string;
  /** Where the sign-in page says what happened. */
  done: "verified" | "unlocked" | "reset";
  /** The reset page asks for a new password; the verification page for the one chosen at registration. */
  password?: "new" | "current";
  /** Names the link's account (masked) before the button is pressed; reading it spends nothing. */
  preview?: "/api/unlock/preview";
};

/** The reset page's new password and the verification page's registration password. */
const PASSWORD_FIELD = {
  new: {
    label: "New password",
    hint: `${PASSWORD_LIMITS.min} to ${PASSWORD_LIMITS.max} characters (${PASSWORD_LIMITS.minWithOtherFactor} if you keep a passkey), not a common or breached password. A passphrase of several words works well.`,
    autoComplete: "new-password",
  },
  current: {
    label: "Password",
    hint: "The one you chose when you created the account: only its owner can confirm it.",
    autoComplete: "current-password",
  },
} as const;

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

/** A same-origin path the server chose (`/account`), or undefined for anything else. */
function samePath(value: unknown): string | undefined {
  return typeof value === "string" && value.startsWith("/") && !value.startsWith("//") && !value.startsWith("/\\") ? value : undefined;
}

/**
 * The page an emailed link opens. Opening it does nothing (mail scanners open links): the person
 * presses the button, which POSTs the token. The token rides in the URL's fragment, which
 * browsers never send to a server or in a Referer; it is read here and removed from the address bar.
 */
export function EmailLinkForm({ endpoint, noScriptForm, action, pendingAction, done, password: asks, preview }: Props) {
  const t = useT();
  const router = useRouter();
  const passwordInput = useRef<HTMLInputElement>(null);
  const hydrated = useHydrated();
  // undefined in the server's HTML and during hydration: the fragment exists only in the browser.
  const token = useSyncExternalStore(noSubscription, linkToken, () => undefined);
  const [pending, setPending] = useState(false);
  const [submits, setSubmits] = useState(0);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [passwordError, setPasswordError] = useState<string | undefined>(undefined);
  const nowMs = useRefusalClock(refusal);
  const waiting = secondsLeft(refusal, nowMs) > 0;
  const formRef = useRef<HTMLFormElement>(null);
  useFocusFirstEmpty(formRef, hydrated && typeof token === "string");
  const account = useLinkAccount(preview, token);
  // The confirmation link's password was right and the account has a second step: it asks next.
  const [secondStep, setSecondStep] = useState<SecondStepMethod[] | null>(null);

  // Only once the token is held in `captured`: a second run (Strict Mode) has nothing left to lose.
  useEffect(() => {
    if (token && window.location.hash) window.history.replaceState(null, "", window.location.pathname + window.location.search);
  }, [token]);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (pending || waiting || !token) return;
    const data = new FormData(event.currentTarget);
    const password = asks ? String(data.get("password") ?? "") : undefined;
    // The reset page's "Also remove every passkey": sent only by that page, as a boolean.
    const removePasskeys = asks === "new" ? data.get("removePasskeys") === "on" : undefined;
    const problem =
      password === undefined
        ? undefined
        : asks === "new"
          ? checkNewPassword(password, undefined, t, PASSWORD_LIMITS.minWithOtherFactor)
          : password
            ? undefined
            : "Enter the password you chose.";
    flushSync(() => {
      setRefusal(null);
      setPasswordError(problem);
      setSubmits((n) => n + 1);
    });
    if (problem) {
      passwordInput.current?.focus();
      return;
    }
    setPending(true);
    try {
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
        if (next) {
          window.location.assign(next);
          return;
        }
        router.push(`/sign-in?done=${done}${email ? `&email=${encodeURIComponent(email)}` : ""}`);
        return;
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
        setRefusal(await refusalFrom(res));
      }
    } catch {
      setRefusal(localRefusal("unavailable", UNAVAILABLE));
    }
    setPending(false);
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
  if (token === null) {
    return (
      <p className="banner error" role="alert" data-testid="link-missing">
        This link is incomplete. Open it again from the email, or <Link href="/forgot-password">ask for a new one</Link>.
      </p>
    );
  }
  return (
    <>
      {account ? (
        <p data-testid="link-account">
          This link is for the account <strong>{account}</strong>.
        </p>
      ) : null}
      <RefusalBanner refusal={refusal} form="recovery" nowMs={nowMs} testId="link-error" />
      {refusal?.error === "invalid_token" ? (
        <p>
          <Link href="/forgot-password">Ask for a new password-reset link</Link>, or <Link href="/sign-in">sign in</Link> to get a new
          confirmation link.
        </p>
      ) : null}
      <form
        ref={formRef}
        onSubmit={(event) => handled(onSubmit(event))}
        noValidate
        method="post"
        action={`/api/no-script/${noScriptForm}`}
        data-hydrated={hydrated && token !== undefined}
      >
        {asks ? (
          <>
            <Field id="link-password" label={PASSWORD_FIELD[asks].label} hint={PASSWORD_FIELD[asks].hint} error={passwordError}>
              {(aria) => (
                <PasswordInput
                  id="link-password"
                  inputRef={passwordInput}
                  name="password"
                  autoComplete={PASSWORD_FIELD[asks].autoComplete}
                  required
                  toggle={hydrated}
                  hideKey={submits}
                  {...aria}
                />
              )}
            </Field>
            {asks === "new" ? (
              <>
                <PasswordStrength field="password" minLength={PASSWORD_LIMITS.minWithOtherFactor} fieldError={passwordError} />
                <p className="checkbox">
                  <input id="remove-passkeys" type="checkbox" name="removePasskeys" />
                  <label htmlFor="remove-passkeys">Also remove every passkey</label>
                </p>
                <p className="hint" id="remove-passkeys-hint">
                  Tick this if a passkey may have been added that you did not add yourself: a passkey signs in without the password.
                </p>
              </>
            ) : null}
          </>
        ) : null}
        <button type="submit" className="primary" aria-disabled={pending || waiting ? true : undefined}>
          {pending ? pendingAction : action}
        </button>
      </form>
    </>
  );
}

/** The masked account a link is for, once `endpoint` has said (nothing on a bad link: the button tells). */
function useLinkAccount(endpoint: string | undefined, token: string | null | undefined): string | null {
  const [account, setAccount] = useState<string | null>(null);
  useEffect(() => {
    if (!endpoint || !token) return;
    let current = true;
    // Fire and forget: a failed lookup (caught) only leaves the account unnamed.
    void fetch(endpoint, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token }) })
      .then(async (res) => (res.ok ? ((await res.json()) as { account?: string }).account : undefined))
      .catch(() => undefined)
      .then((named) => {
        if (current && named) setAccount(named);
      });
    return () => {
      current = false;
    };
  }, [endpoint, token]);
  return account;
}

"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useRef, useState, useSyncExternalStore, type FormEvent } from "react";
import { AltchaField, type AltchaHandle } from "../components/AltchaField";
import { RefusalBanner, refusalFrom, useCountdown, type Refusal } from "../components/RefusalBanner";

type Props = { callbackPath: string; registered: boolean; initialEmail: string };

const GENERIC_FAILURE = "Incorrect email or password.";

export function SignInForm({ callbackPath, registered, initialEmail }: Props) {
  const router = useRouter();
  const altcha = useRef<AltchaHandle>(null);
  const [pending, setPending] = useState(false);
  // False in the server's HTML and during hydration: until then the browser, not this
  // component, would submit the form (see its action).
  const hydrated = useSyncExternalStore(noSubscription, () => true, () => false);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const remainingSeconds = useCountdown(refusal);
  const waiting = remainingSeconds > 0;

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setPending(true);
    setRefusal(null);
    const form = new FormData(event.currentTarget);
    try {
      const [csrf, altchaPayload] = await Promise.all([
        fetch("/api/auth/csrf", { cache: "no-store" }).then((res) => res.json() as Promise<{ csrfToken: string }>),
        altcha.current?.payload() ?? Promise.resolve(""),
      ]);
      const res = await fetch("/api/auth/callback/credentials", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          email: String(form.get("email") ?? ""),
          password: String(form.get("password") ?? ""),
          altcha: altchaPayload,
          csrfToken: csrf.csrfToken,
          callbackUrl: callbackPath,
          json: "true",
        }),
      });
      if (res.status >= 400 && res.headers.get("content-type")?.includes("application/json") && res.status !== 401) {
        setRefusal(await refusalFrom(res));
      } else {
        const body = (await res.json().catch(() => ({}))) as { url?: string };
        if (!body.url || new URL(body.url, window.location.href).searchParams.has("error")) {
          setRefusal({ error: "invalid_credentials", message: GENERIC_FAILURE });
        } else {
          router.push(callbackPath);
          router.refresh();
          return;
        }
      }
    } catch {
      setRefusal({ error: "unavailable", message: "Sign-in is unavailable right now. Try again in a moment." });
    }
    // Each solution is accepted once: the next attempt needs a fresh one.
    altcha.current?.reset();
    setPending(false);
  }

  return (
    <>
      {registered && !refusal ? <p className="banner ok">Your account is ready. Sign in to continue.</p> : null}
      <RefusalBanner refusal={refusal} remainingSeconds={remainingSeconds} testId="sign-in-error" />
      {/* Posted, never GET: a submit before hydration must not put the password in the URL. */}
      <form onSubmit={onSubmit} noValidate method="post" action={`/api/no-script/sign-in?callbackUrl=${encodeURIComponent(callbackPath)}`} data-hydrated={hydrated}>
        <label>
          Email
          <input name="email" type="email" autoComplete="username" required defaultValue={initialEmail} />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        <AltchaField ref={altcha} />
        <button type="submit" disabled={pending || waiting}>
          {pending ? "Signing in…" : "Sign in"}
        </button>
      </form>
      <p>
        No account yet? <Link href="/register">Create one</Link>.
      </p>
    </>
  );
}

function noSubscription(): () => void {
  return () => {};
}

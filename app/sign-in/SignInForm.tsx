"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";

type Props = { callbackPath: string; registered: boolean; initialEmail: string };

const GENERIC_FAILURE = "Incorrect email or password.";

export function SignInForm({ callbackPath, registered, initialEmail }: Props) {
  const router = useRouter();
  const [pending, setPending] = useState(false);
  const [error, setError] = useState("");

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setPending(true);
    setError("");
    const form = new FormData(event.currentTarget);
    try {
      const csrf = await fetch("/api/auth/csrf", { cache: "no-store" }).then((res) => res.json() as Promise<{ csrfToken: string }>);
      const res = await fetch("/api/auth/callback/credentials", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          email: String(form.get("email") ?? ""),
          password: String(form.get("password") ?? ""),
          csrfToken: csrf.csrfToken,
          callbackUrl: callbackPath,
          json: "true",
        }),
      });
      const body = (await res.json().catch(() => ({}))) as { url?: string; message?: string };
      if (!res.ok && body.message) {
        setError(body.message);
      } else if (!body.url || new URL(body.url, window.location.href).searchParams.has("error")) {
        setError(GENERIC_FAILURE);
      } else {
        router.push(callbackPath);
        router.refresh();
        return;
      }
    } catch {
      setError("Sign-in is unavailable right now. Try again in a moment.");
    }
    setPending(false);
  }

  return (
    <>
      {registered && !error ? <p className="banner ok">Your account is ready. Sign in to continue.</p> : null}
      <div className="banner error" role="alert" aria-live="assertive" data-testid="sign-in-error">
        {error}
      </div>
      <form onSubmit={onSubmit} noValidate>
        <label>
          Email
          <input name="email" type="email" autoComplete="username" required defaultValue={initialEmail} />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        <button type="submit" disabled={pending}>
          {pending ? "Signing in…" : "Sign in"}
        </button>
      </form>
      <p>
        No account yet? <Link href="/register">Create one</Link>.
      </p>
    </>
  );
}

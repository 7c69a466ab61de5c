"use client";

import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState, type FormEvent } from "react";

type Props = { minLength: number; maxLength: number };
type Fields = Partial<Record<"email" | "password", string>>;

export function RegisterForm({ minLength, maxLength }: Props) {
  const router = useRouter();
  const [pending, setPending] = useState(false);
  const [error, setError] = useState("");
  const [fields, setFields] = useState<Fields>({});

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setPending(true);
    setError("");
    setFields({});
    const form = new FormData(event.currentTarget);
    const email = String(form.get("email") ?? "");
    try {
      const res = await fetch("/api/register", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ email, password: String(form.get("password") ?? "") }),
      });
      if (res.status === 201) {
        router.push(`/sign-in?registered=1&email=${encodeURIComponent(email.trim())}`);
        return;
      }
      const body = (await res.json().catch(() => ({}))) as { message?: string; fields?: Fields };
      setFields(body.fields ?? {});
      setError(body.message ?? "Registration failed. Try again.");
    } catch {
      setError("Registration is unavailable right now. Try again in a moment.");
    }
    setPending(false);
  }

  return (
    <>
      <div className="banner error" role="alert" aria-live="assertive" data-testid="register-error">
        {error}
      </div>
      <form onSubmit={onSubmit} noValidate>
        <label>
          Email
          <input name="email" type="email" autoComplete="email" required aria-invalid={fields.email ? true : undefined} aria-describedby="email-error" />
          <span id="email-error" className="field-error">
            {fields.email}
          </span>
        </label>
        <label>
          Password
          <span className="hint" id="password-hint">
            {minLength} to {maxLength} characters. A passphrase of several words works well.
          </span>
          <input
            name="password"
            type="password"
            autoComplete="new-password"
            required
            minLength={minLength}
            maxLength={maxLength}
            aria-invalid={fields.password ? true : undefined}
            aria-describedby="password-hint password-error"
          />
          <span id="password-error" className="field-error">
            {fields.password}
          </span>
        </label>
        <button type="submit" disabled={pending}>
          {pending ? "Creating account…" : "Create account"}
        </button>
      </form>
      <p>
        Already registered? <Link href="/sign-in">Sign in</Link>.
      </p>
    </>
  );
}

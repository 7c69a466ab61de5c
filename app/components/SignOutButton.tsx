"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { handled } from "./handled";
import { useHydrated } from "./hydrated";

type Labels = {
  /** "Sign out" in the page's language (the header is outside every page's messages). */
  label: string;
  /** "Signing out…": said at once on a press, since the answer can take seconds (the dev server compiles on first use). */
  pendingLabel: string;
};

/**
 * The sign-out form's button (SignOutForm): a plain post, which works without JavaScript; with
 * it, the press shows "Signing out…" at once and a second press does not post again.
 */
export function SignOutSubmit({ label, pendingLabel }: Labels) {
  const [pending, setPending] = useState(false);
  return (
    <button
      type="submit"
      className="link nav-item"
      aria-disabled={pending ? true : undefined}
      data-testid="sign-out"
      onClick={(event) => {
        if (pending) event.preventDefault();
        else setPending(true);
      }}
    >
      {pending ? pendingLabel : label}
    </button>
  );
}

/**
 * Sign-out for a browser that has no CSRF cookie yet (see SignOutForm): fetch a token, post it.
 * Plain fetch, so pages do not carry next-auth's client library for this one button. It is
 * `disabled` until React runs, when a press would do nothing and look as if it had (it only ever
 * turns on, so no focus falls to <body>, the reason for aria-disabled elsewhere).
 */
export function SignOutButton({ label, pendingLabel }: Labels) {
  const router = useRouter();
  const hydrated = useHydrated();
  const [pending, setPending] = useState(false);
  async function signOut() {
    if (pending) return;
    setPending(true);
    try {
      const { csrfToken } = (await (await fetch("/api/auth/csrf", { cache: "no-store" })).json()) as { csrfToken: string };
      await fetch("/api/auth/signout", {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ csrfToken, callbackUrl: "/", json: "true" }),
      });
      router.push("/");
      router.refresh();
    } catch (error) {
      // The network failed: the button works again, for another try.
      setPending(false);
      throw error;
    }
  }
  return (
    <button
      type="button"
      className="link nav-item"
      disabled={!hydrated}
      aria-disabled={pending ? true : undefined}
      data-testid="sign-out"
      onClick={() => handled(signOut())}
    >
      {pending ? pendingLabel : label}
    </button>
  );
}

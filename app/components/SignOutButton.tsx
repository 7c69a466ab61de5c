"use client";

import { useRouter } from "next/navigation";
import { handled } from "./handled";
import { useHydrated } from "./hydrated";

/**
 * Sign-out for a browser that has no CSRF cookie yet (see SignOutForm): fetch a token, post it.
 * Plain fetch, so pages do not carry next-auth's client library for this one button. It is
 * `disabled` until React runs, when a press would do nothing and look as if it had (it only ever
 * turns on, so no focus falls to <body>, the reason for aria-disabled elsewhere).
 * `label`: "Sign out" in the page's language (the header is outside every page's messages).
 */
export function SignOutButton({ label }: { label: string }) {
  const router = useRouter();
  const hydrated = useHydrated();
  async function signOut() {
    const { csrfToken } = (await (await fetch("/api/auth/csrf", { cache: "no-store" })).json()) as { csrfToken: string };
    await fetch("/api/auth/signout", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrfToken, callbackUrl: "/", json: "true" }),
    });
    router.push("/");
    router.refresh();
  }
  return (
    <button type="button" className="link nav-item" disabled={!hydrated} onClick={() => handled(signOut())}>
      {label}
    </button>
  );
}

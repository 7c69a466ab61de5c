"use client";

import { useRouter } from "next/navigation";
import { handled } from "./handled";

/**
 * Sign-out for a browser that has no CSRF cookie yet (see SignOutForm): fetch a token, post it.
 * Plain fetch, so pages do not carry next-auth's client library for this one button.
 */
/** `label`: "Sign out" in the page's language (the header is outside every page's messages). */
export function SignOutButton({ label }: { label: string }) {
  const router = useRouter();
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
    <button type="button" className="link nav-item" onClick={() => handled(signOut())}>
      {label}
    </button>
  );
}

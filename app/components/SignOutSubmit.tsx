"use client";

import { useRouter } from "next/navigation";
import { useState, type MouseEvent } from "react";
import { handled } from "./handled";

type Labels = {
  /** "Sign out" in the page's language (the header is outside every page's messages). */
  label: string;
  /** "Signing out…": said at once on a press, since the answer can take seconds (the dev server compiles on first use). */
  pendingLabel: string;
};

/**
 * The sign-out form's button (SignOutForm): a plain post, which works without JavaScript. With it,
 * the press shows "Signing out…" at once, posts the same form (its form token included) with
 * fetch, and goes home without a full page load; a second press does not post again.
 */
export function SignOutSubmit({ label, pendingLabel }: Labels) {
  const router = useRouter();
  const [pending, setPending] = useState(false);
  async function signOut(form: HTMLFormElement) {
    try {
      const fields = new URLSearchParams([...new FormData(form)].map(([name, value]) => [name, String(value)]));
      fields.set("json", "true");
      await fetch(form.action, { method: "POST", body: fields });
      router.push("/");
      router.refresh();
    } catch (error) {
      // The network failed: the button works again, for another try.
      setPending(false);
      throw error;
    }
  }
  function press(event: MouseEvent<HTMLButtonElement>) {
    event.preventDefault();
    const form = event.currentTarget.form;
    if (pending || !form) return;
    setPending(true);
    handled(signOut(form));
  }
  return (
    <button type="submit" className="link nav-item" aria-disabled={pending ? true : undefined} data-testid="sign-out" onClick={press}>
      {pending ? pendingLabel : label}
    </button>
  );
}

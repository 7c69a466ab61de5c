"use client";

import { useState } from "react";

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

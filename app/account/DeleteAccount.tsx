"use client";

import { useState } from "react";
import { Field } from "../components/Field";
import { handled } from "../components/handled";
import type { DELETE_WORDS } from "./action-words";
import { FreshActionPrompts, type ActionProps } from "./FreshPostForm";
import { postForm, useFreshAction } from "./useFreshAction";

const ACTION = "/api/account/delete";

/**
 * "Delete account": the address typed as the explicit confirmation, then "Confirm it's you" in
 * place when the server asks for a fresh authentication. A plain form post without JavaScript.
 * Deleted, the browser goes home, signed out, where the page says so.
 */
export function DeleteAccount({ formToken, email, ways, words }: ActionProps<typeof DELETE_WORDS>) {
  const action = useFreshAction();
  const { pending, freshly } = action;
  const [confirm, setConfirm] = useState("");
  const [missing, setMissing] = useState(false);
  return (
    <>
      <FreshActionPrompts action={action} formToken={formToken} email={email} ways={ways} testId="delete-account-error" />
      <form
        method="post"
        action={ACTION}
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          if (pending) return;
          setMissing(confirm.trim() === "");
          if (confirm.trim() === "") return;
          handled(
            freshly(
              words.reason,
              () => postForm(ACTION, { formToken, confirm, json: "true" }),
              // A whole new page, not a client navigation: the header and every cached page were signed in.
              () => window.location.assign(new URL("/?notice=account_deleted", window.location.href).href),
            ),
          );
        }}
      >
        <input type="hidden" name="formToken" value={formToken} />
        <Field id="delete-confirm" label={words.confirmLabel} hint={words.confirmHint} error={missing ? words.enterEmail : undefined}>
          {(aria) => (
            <input
              id="delete-confirm"
              name="confirm"
              type="email"
              autoComplete="off"
              spellCheck={false}
              required
              value={confirm}
              onChange={(event) => setConfirm(event.target.value)}
              {...aria}
            />
          )}
        </Field>
        <button type="submit" className="secondary" aria-disabled={pending ? true : undefined}>
          {pending ? words.pending : words.submit}
        </button>
      </form>
    </>
  );
}

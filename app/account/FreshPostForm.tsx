"use client";

import { RefusalBanner } from "../components/RefusalBanner";
import { handled } from "../components/handled";
import { ConfirmItsYou, type ConfirmWays } from "./ConfirmItsYou";
import { postForm, type useFreshAction } from "./useFreshAction";

type Props = {
  action: string;
  formToken: string;
  id: string;
  /** Why "Confirm it's you" is asked, should the server want a fresh authentication. */
  reason: string;
  freshly: ReturnType<typeof useFreshAction>["freshly"];
  /** The button's accessible name (it begins with `text`) and its visible words. */
  label: string;
  text: string;
  className?: string;
  /** The form's class (its place in the item's layout). */
  formClassName?: string;
};

/**
 * One item's button that needs a fresh authentication (remove a passkey, forget a device): a plain
 * form post without JavaScript; with it, a script post that asks "Confirm it's you" first when the
 * server answers `reauthentication_required`, then carries on.
 */
export function FreshPostForm({
  action,
  formToken,
  id,
  reason,
  freshly,
  label,
  text,
  className = "secondary",
  formClassName = "inline",
}: Props) {
  return (
    <form
      method="post"
      action={action}
      className={formClassName}
      onSubmit={(event) => {
        event.preventDefault();
        handled(freshly(reason, () => postForm(action, { formToken, id, json: "true" })));
      }}
    >
      <input type="hidden" name="formToken" value={formToken} />
      <input type="hidden" name="id" value={id} />
      <button type="submit" className={className} aria-label={label}>
        {text}
      </button>
    </form>
  );
}

type PromptProps = {
  action: ReturnType<typeof useFreshAction>;
  formToken: string;
  email: string;
  ways: ConfirmWays;
  testId: string;
};

/** What a fresh action shows above its buttons: its refusal, and "Confirm it's you" while the server asks. */
export function FreshActionPrompts({ action, formToken, email, ways, testId }: PromptProps) {
  const { refusal, nowMs, confirming, setConfirming } = action;
  return (
    <>
      <RefusalBanner refusal={refusal} form="sign-in" nowMs={nowMs} testId={testId} />
      {confirming ? (
        <ConfirmItsYou
          formToken={formToken}
          email={email}
          ways={ways}
          reason={confirming.reason}
          onConfirmed={() => void confirming.resume()}
          onCancel={() => setConfirming(null)}
        />
      ) : null}
    </>
  );
}

/**
 * An account action's props: its words come said from the server (keys of its part of the
 * `account` catalogue), so the catalogue part itself need not ship to the browser.
 */
export type ActionProps<Keys extends readonly string[]> = {
  formToken: string;
  email: string;
  ways: ConfirmWays;
  words: Record<Keys[number], string>;
};

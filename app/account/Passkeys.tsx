"use client";

import { useRouter } from "next/navigation";
import { useState } from "react";
import { LocalTime } from "../components/LocalTime";
import { RefusalBanner, localRefusal, refusalFrom, useRefusalClock, type Refusal } from "../components/RefusalBanner";
import { handled } from "../components/handled";
import { useHydrated } from "../components/hydrated";
import { ConfirmItsYou } from "./ConfirmItsYou";

export type PasskeyItem = { id: string; name: string; createdAt: string; lastUsedAt: string | null; synced: boolean };

type Props = { formToken: string; email: string; passkeys: PasskeyItem[] };

const post = (path: string, fields: Record<string, string>) =>
  fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  });

/**
 * The account's passkeys: add one (the browser's WebAuthn dialog), rename, remove. Adding and
 * removing need a fresh authentication: when the server asks for one, "Confirm it's you" comes
 * first and the action carries on after it. Rename and remove also work as plain forms.
 */
export function Passkeys({ formToken, email, passkeys }: Props) {
  const router = useRouter();
  const hydrated = useHydrated();
  const [pending, setPending] = useState(false);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [confirming, setConfirming] = useState<{ reason: string; resume: () => Promise<void> } | null>(null);
  const nowMs = useRefusalClock(refusal);

  /** Runs `attempt`; when the server wants a fresh authentication, asks for it and runs it again. */
  async function freshly(reason: string, attempt: () => Promise<Response | null>) {
    setRefusal(null);
    setPending(true);
    try {
      const res = await attempt();
      if (
        res &&
        res.status === 401 &&
        (
          await res
            .clone()
            .json()
            .catch(() => ({}))
        ).error === "reauthentication_required"
      ) {
        setConfirming({
          reason,
          resume: async () => {
            setConfirming(null);
            await freshly(reason, attempt);
          },
        });
        return;
      }
      if (res && !res.ok) return setRefusal(await refusalFrom(res));
      router.refresh();
    } catch {
      setRefusal(localRefusal("unavailable", "That did not work just now. Try again in a moment."));
    } finally {
      setPending(false);
    }
  }

  async function addPasskey(): Promise<Response | null> {
    const { startRegistration } = await import("@simplewebauthn/browser");
    const optionsRes = await post("/api/account/passkeys/options", { formToken, purpose: "register" });
    if (!optionsRes.ok) return optionsRes;
    const { options } = (await optionsRes.json()) as { options: Parameters<typeof startRegistration>[0]["optionsJSON"] };
    const credential = await startRegistration({ optionsJSON: options }).catch(() => null);
    if (!credential) {
      setRefusal(localRefusal("passkey_invalid", "No passkey was made. Try again when you are ready."));
      return null;
    }
    return post("/api/account/passkeys", { formToken, credential: JSON.stringify(credential) });
  }

  return (
    <div className="passkeys">
      <RefusalBanner refusal={refusal} form="sign-in" nowMs={nowMs} testId="passkeys-error" />
      {confirming ? (
        <ConfirmItsYou
          formToken={formToken}
          email={email}
          hasPasskey={passkeys.length > 0}
          reason={confirming.reason}
          onConfirmed={() => void confirming.resume()}
          onCancel={() => setConfirming(null)}
        />
      ) : null}
      {passkeys.length === 0 ? (
        <p>No passkeys yet.</p>
      ) : (
        <ul className="passkey-list" data-testid="passkey-list">
          {passkeys.map((passkey) => (
            <li key={passkey.id} data-testid="passkey">
              <p>
                <strong>{passkey.name}</strong>
                {passkey.synced ? <span className="hint"> (synced)</span> : null}
              </p>
              <p className="hint">
                Added <LocalTime iso={passkey.createdAt} />.{" "}
                {passkey.lastUsedAt ? (
                  <>
                    Last used <LocalTime iso={passkey.lastUsedAt} />.
                  </>
                ) : (
                  "Not used yet."
                )}
              </p>
              <form method="post" action="/api/account/passkeys/rename" className="inline">
                <input type="hidden" name="formToken" value={formToken} />
                <input type="hidden" name="id" value={passkey.id} />
                <label htmlFor={`passkey-name-${passkey.id}`}>Name</label>
                <input id={`passkey-name-${passkey.id}`} name="name" defaultValue={passkey.name} maxLength={60} required />
                <button type="submit" className="secondary" aria-label={`Rename passkey ${passkey.name}`}>
                  Rename
                </button>
              </form>
              <form
                method="post"
                action="/api/account/passkeys/remove"
                className="inline"
                onSubmit={(event) => {
                  event.preventDefault();
                  handled(
                    freshly(`Removing the passkey "${passkey.name}" needs you to confirm it's you.`, () =>
                      post("/api/account/passkeys/remove", { formToken, id: passkey.id, json: "true" }),
                    ),
                  );
                }}
              >
                <input type="hidden" name="formToken" value={formToken} />
                <input type="hidden" name="id" value={passkey.id} />
                <button type="submit" className="secondary" aria-label={`Remove passkey ${passkey.name}`}>
                  Remove
                </button>
              </form>
            </li>
          ))}
        </ul>
      )}
      {hydrated ? (
        <button
          type="button"
          className="primary"
          aria-disabled={pending ? true : undefined}
          onClick={() => {
            if (!pending) handled(freshly("Adding a passkey needs you to confirm it's you.", addPasskey));
          }}
        >
          {pending ? "Waiting for your passkey…" : "Add a passkey"}
        </button>
      ) : (
        <p className="hint">Adding a passkey needs JavaScript.</p>
      )}
    </div>
  );
}

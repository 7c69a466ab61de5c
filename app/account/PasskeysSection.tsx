import { gatehouse } from "@/lib/auth/gatehouse";
import { sessionFormToken } from "@/lib/http/form-token";
import type { PasskeyView } from "@/lib/passkeys/store";
import { Passkeys } from "./Passkeys";

/** Passkeys: the account's doors that need no password, and that strangers' failures cannot lock. */
export async function PasskeysSection({ passkeys, currentSid, email }: { passkeys: PasskeyView[]; currentSid: string; email: string }) {
  const gate = await gatehouse();
  return (
    <div className="card">
      <h2>Passkeys</h2>
      <p className="hint">
        A passkey signs you in without your password, with your fingerprint, face or device PIN. It cannot be phished, and it still works
        while sign-in from new devices is paused after failed attempts.
      </p>
      <Passkeys
        formToken={sessionFormToken(gate.config.session.secret, currentSid)}
        email={email}
        passkeys={passkeys.map((passkey) => ({
          id: passkey.id,
          name: passkey.name,
          createdAt: passkey.createdAt.toISOString(),
          lastUsedAt: passkey.lastUsedAt?.toISOString() ?? null,
          synced: passkey.synced,
        }))}
      />
    </div>
  );
}

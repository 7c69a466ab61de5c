import { gatehouse } from "@/lib/app";
import { sessionFormToken } from "@/lib/http/form-token";
import type { PasskeyView } from "@/lib/passkeys/store";
import { getTranslations } from "next-intl/server";
import { Passkeys } from "./Passkeys";

/** Passkeys: the account's doors that need no password, and that strangers' failures cannot lock. */
export async function PasskeysSection({ passkeys, currentSid, email }: { passkeys: PasskeyView[]; currentSid: string; email: string }) {
  const [gate, t] = await Promise.all([gatehouse(), getTranslations("account.passkeys")]);
  return (
    <div className="card">
      <h2>{t("heading")}</h2>
      <p className="hint">{t("hint")}</p>
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

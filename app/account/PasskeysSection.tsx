import { gatehouse } from "@/lib/app";
import { sessionFormToken } from "@/lib/http/form-token";
import { passkeyObstacle } from "@/lib/passkeys/passkey-rules";
import type { PasskeyView } from "@/lib/passkeys/store";
import { getTranslations } from "next-intl/server";
import { Passkeys } from "./Passkeys";

/** Passkeys: the account's doors that need no password, and that strangers' failures cannot lock. */
export async function PasskeysSection({
  passkeys,
  currentSid,
  email,
  hasPassword,
}: {
  passkeys: PasskeyView[];
  currentSid: string;
  email: string;
  hasPassword: boolean;
}) {
  const [gate, t] = await Promise.all([gatehouse(), getTranslations("account.passkeys")]);
  // At an IP address or a plain http domain the browser refuses every ceremony: say why, offer none.
  const { origin } = gate.passkeySettings.rp;
  const obstacle = passkeyObstacle(origin);
  return (
    <div className="card" id="passkeys">
      <h2>{t("heading")}</h2>
      <p className="hint">{t("hint")}</p>
      {obstacle ? (
        <p className="banner warn" data-testid="passkeys-unavailable">
          {t(`unavailable.${obstacle}`, { origin })}
        </p>
      ) : null}
      <Passkeys
        canAdd={obstacle === null}
        hasPassword={hasPassword}
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

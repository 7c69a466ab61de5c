import QRCode from "qrcode";
import { gatehouse } from "@/lib/app";
import { base32Of, groupsOfFour, totpUri } from "@/lib/factors/totp";
import { RECOVERY_CODE_COUNT } from "@/lib/factors/recovery-codes";
import { sessionFormToken } from "@/lib/http/form-token";
import { getTranslations } from "next-intl/server";
import { SecondFactors } from "./SecondFactors";

/**
 * The second step after the password: an authenticator app, a passkey asked after the password,
 * and the recovery codes that stand in for both. An app being set up is shown from its sealed
 * secret (QR code and text) until its first code turns it on; only the browser session that started
 * the setup sees it, for 10 minutes (lib/factors/store.ts).
 */
export async function SecondFactorSection({
  userId,
  currentSid,
  email,
  hasPassword,
}: {
  userId: string;
  currentSid: string;
  email: string;
  hasPassword: boolean;
}) {
  const [gate, t] = await Promise.all([gatehouse(), getTranslations("account.factors")]);
  const summary = await gate.factors.summary(userId);
  const secret = summary.totp ? null : await gate.factors.totpBeingSetUp(userId, currentSid, gate.clock());
  const uri = secret ? totpUri(secret, gate.passkeySettings.rp.name, email) : null;
  const setup = secret
    ? {
        // A phone cannot scan its own screen: the same URI as a link opens the app on it.
        uri: uri!,
        // An SVG made here from our own URI: no script, no remote image, nothing the CSP must allow.
        qrSvg: await QRCode.toString(uri!, {
          type: "svg",
          margin: 1,
          errorCorrectionLevel: "M",
        }),
        secretText: groupsOfFour(base32Of(secret)),
      }
    : null;
  return (
    <div className="card" id="second-step">
      <h2>{t("heading")}</h2>
      <p className="hint">{t("hint")}</p>
      <SecondFactors
        formToken={sessionFormToken(gate.config.session.secret, currentSid)}
        email={email}
        summary={summary}
        setup={setup}
        recoveryCodeCount={RECOVERY_CODE_COUNT}
        hasPassword={hasPassword}
      />
    </div>
  );
}

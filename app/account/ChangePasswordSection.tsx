import { gatehouse } from "@/lib/app";
import { sessionFormToken } from "@/lib/http/form-token";
import { minimumPasswordLength } from "@/lib/password/password-rules";
import { getTranslations } from "next-intl/server";
import { hasPassword } from "@/lib/users/accounts";
import { ChangePasswordForm } from "./ChangePasswordForm";

/** Change password (or set one, on an account started with a passkey): after it, every other browser and API session is signed out. */
export async function ChangePasswordSection({
  userId,
  currentSid,
  email,
  hasOtherFactor,
  heading,
}: {
  userId: string;
  currentSid: string;
  email: string;
  /** A passkey: the new password may be as short as 8 characters (NIST SP 800-63B-4 §3.1.1.2). */
  hasOtherFactor: boolean;
  /** Another heading than "Change password" (the page that requires a new one). */
  heading?: string;
}) {
  const [gate, t] = await Promise.all([gatehouse(), getTranslations("account.password")]);
  const passkeys = await gate.prisma.passkey.count({ where: { userId } });
  // An account started with a passkey has no password to change: it may set one (decision 39).
  const setting = !(await hasPassword(gate.prisma, userId));
  return (
    <div className="card">
      <h2>{setting ? t("setHeading") : (heading ?? t("heading"))}</h2>
      <p className="hint">{setting ? t("setHint") : t("hint")}</p>
      <ChangePasswordForm
        formToken={sessionFormToken(gate.config.session.secret, currentSid)}
        email={email}
        minLength={minimumPasswordLength({ hasOtherFactor })}
        ways={{ password: !setting, passkey: passkeys > 0 }}
        mode={setting ? "set" : "change"}
      />
    </div>
  );
}

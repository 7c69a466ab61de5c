import { gatehouse } from "@/lib/auth/gatehouse";
import { sessionFormToken } from "@/lib/http/form-token";
import { minimumPasswordLength } from "@/lib/password/rules";
import { ChangePasswordForm } from "./ChangePasswordForm";

/** Change password: after it, every other browser and API session of the account is signed out. */
export async function ChangePasswordSection({
  currentSid,
  email,
  hasOtherFactor,
  heading = "Change password",
}: {
  currentSid: string;
  email: string;
  /** A passkey: the new password may be as short as 8 characters (NIST SP 800-63B-4 §3.1.1.2). */
  hasOtherFactor: boolean;
  heading?: string;
}) {
  const gate = await gatehouse();
  return (
    <div className="card">
      <h2>{heading}</h2>
      <p className="hint">Every other browser and app signed in to your account is signed out when you change it.</p>
      <ChangePasswordForm
        formToken={sessionFormToken(gate.config.session.secret, currentSid)}
        email={email}
        minLength={minimumPasswordLength({ hasOtherFactor })}
      />
    </div>
  );
}

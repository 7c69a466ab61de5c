import { gatehouse } from "@/lib/auth/gatehouse";
import { sessionFormToken } from "@/lib/http/form-token";
import { ChangePasswordForm } from "./ChangePasswordForm";

/** Change password: after it, every other browser and API session of the account is signed out. */
export async function ChangePasswordSection({ currentSid, email }: { currentSid: string; email: string }) {
  const gate = await gatehouse();
  return (
    <div className="card">
      <h2>Change password</h2>
      <p className="hint">Every other browser and app signed in to your account is signed out when you change it.</p>
      <ChangePasswordForm formToken={sessionFormToken(gate.config.NEXTAUTH_SECRET, currentSid)} email={email} />
    </div>
  );
}

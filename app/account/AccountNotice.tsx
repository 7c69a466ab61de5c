const NOTICES: Record<string, { tone: "ok" | "warn"; text: string }> = {
  browser_session_revoked: { tone: "ok", text: "That browser session is signed out." },
  api_session_revoked: { tone: "ok", text: "That API session is revoked: its refresh token no longer works." },
  signed_out_everywhere_else: { tone: "ok", text: "You are signed out everywhere else: every other browser and every API session." },
  already_ended: { tone: "warn", text: "That session had already ended." },
  password_changed: { tone: "ok", text: "Your password is changed. Every other browser and API session is signed out." },
  passkey_renamed: { tone: "ok", text: "The passkey is renamed." },
  passkey_removed: { tone: "ok", text: "The passkey is removed: it no longer signs in to your account." },
  confirm_first: { tone: "warn", text: "Confirm it's you first: that change needs a password or passkey from the last 10 minutes." },
  reauthenticated: { tone: "ok", text: "Thank you. For the next 10 minutes this browser can change how your account is protected." },
};

/** What the last account form did, from the redirect's ?notice= (unknown values show nothing). */
export function AccountNotice({ notice }: { notice: string | undefined }) {
  const shown = notice ? NOTICES[notice] : undefined;
  if (!shown) return null;
  return (
    <p className={`banner ${shown.tone}`} role="status" data-testid="account-notice">
      {shown.text}
    </p>
  );
}

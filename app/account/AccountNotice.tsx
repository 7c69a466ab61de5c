import { getTranslations } from "next-intl/server";

const TONES: Record<string, "ok" | "warn"> = {
  browser_session_revoked: "ok",
  api_session_revoked: "ok",
  signed_out_everywhere_else: "ok",
  already_ended: "warn",
  password_changed: "ok",
  password_set: "ok",
  passkey_renamed: "ok",
  passkey_removed: "ok",
  confirm_first: "warn",
  reauthenticated: "ok",
  device_forgotten: "ok",
  email_verified: "ok",
  email_change_sent: "ok",
  email_changed: "ok",
  passkey_invite_dismissed: "ok",
};

/**
 * Notices that arrive with a new page rather than after a form on it (confirming the address
 * from its emailed link): focus goes to the notice, so a screen reader says it instead of
 * starting from <body>. `autofocus` works on the server's HTML, with no script of its own.
 */
const FOCUSED = new Set(["email_verified"]);

/** What the last account form did, from the redirect's ?notice= (unknown values show nothing); its words in `account.notice`. */
export async function AccountNotice({ notice }: { notice: string | undefined }) {
  const tone = notice !== undefined && Object.hasOwn(TONES, notice) ? TONES[notice] : undefined;
  if (!notice || !tone) return null;
  const t = await getTranslations("account.notice");
  return (
    <p
      className={`banner ${tone}`}
      role="status"
      data-testid="account-notice"
      {...(FOCUSED.has(notice) ? { tabIndex: -1, autoFocus: true } : {})}
    >
      {t(notice)}
    </p>
  );
}

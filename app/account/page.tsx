import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentSession } from "@/lib/auth/current-session";
import { gatehouse } from "@/lib/auth/gatehouse";
import type { SecurityEventKind } from "@/lib/events/security-events";
import { LocalTime } from "../components/LocalTime";
import { sessionFormToken } from "@/lib/http/form-token";
import { AccountNotice } from "./AccountNotice";
import { ConfirmFirstCard } from "./ConfirmItsYou";
import { ChangePasswordSection } from "./ChangePasswordSection";
import { PasskeysSection } from "./PasskeysSection";
import { SecondFactorSection } from "./SecondFactorSection";
import { SessionsSection } from "./SessionsSection";
import { hasOtherFactor } from "@/lib/users/accounts";
import { PageMessages } from "../components/PageMessages";

export const dynamic = "force-dynamic";

export const metadata: Metadata = { title: "Your account" };

const LABELS: Record<SecurityEventKind, string> = {
  sign_in_failed: "Failed sign-in (wrong password)",
  sign_in_unconfirmed: "Sign-in before the address was confirmed",
  sign_in_succeeded: "Signed in",
  locked: "Sign-in paused after repeated failures",
  untrusted_paused: "Sign-in from new devices paused after too many failures",
  refresh_family_created: "New API session (refresh token issued)",
  browser_session_revoked: "Signed out a browser session",
  api_session_revoked: "Revoked an API session",
  signed_out_everywhere_else: "Signed out everywhere else",
  password_changed: "Password changed (every other session signed out)",
  admin_unlocked: "Sign-in pause lifted by an administrator",
  admin_sessions_revoked: "Every session signed out by an administrator",
  email_verified: "Email address confirmed",
  password_reset: "Password reset from an emailed link (every session signed out)",
  unlock_link_used: "A browser let past a sign-in pause by an emailed link",
  refresh_token_reused: "API session ended: its refresh token was used twice (a copy may exist)",
  passkey_added: "Passkey added",
  passkey_removed: "Passkey removed",
  passkey_counter_regressed: "Passkey sign-in refused: the key's use count went backwards (it may have been copied)",
  admin_passkey_removed: "Passkey removed by an administrator",
  passkey_renamed: "Passkey renamed",
  passkeys_removed_by_reset: "Every passkey removed with the password reset",
  reauthenticated: "Confirmed it was you (password or passkey asked again)",
  totp_added: "Authenticator app turned on",
  totp_removed: "Authenticator app removed",
  passkey_second_factor_on: "A passkey is now asked for after the password",
  passkey_second_factor_off: "A passkey is no longer asked for after the password",
  recovery_codes_replaced: "New recovery codes made (the old ones no longer work)",
  recovery_code_used: "Signed in with a recovery code",
  second_step_due: "Right password; the sign-in waited for the second step",
  second_step_failed: "Wrong code at the second sign-in step",
  device_confirmation_due: "Right password from a new device; the sign-in waited for the code we emailed",
  device_confirmation_failed: "Wrong emailed code for a new device",
  admin_factors_removed: "Second sign-in step removed by an administrator",
  password_found_breached: "Password found in a data breach at sign-in (a new one must be chosen)",
};

export default async function AccountPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { notice } = await searchParams;
  const session = await currentSession();
  if (!session) redirect("/sign-in?callbackUrl=%2Faccount");
  const { userId, sid: currentSid } = session;
  const gate = await gatehouse();
  const user = await gate.prisma.user.findUnique({ where: { id: userId }, select: { email: true, createdAt: true } });
  // A valid session for an account that no longer exists is treated as signed out.
  if (!user) redirect("/sign-in?callbackUrl=%2Faccount");
  const events = await gate.events.recent(userId, 20);
  // One read serves the passkey list and whether "Confirm it's you" can offer a passkey.
  const passkeys = await gate.passkeys.list(userId);
  // What strangers currently meet when they try this account (the owner's known devices are not affected).
  const strangers = await gate.lockouts.check(gate.usernameKey(user.email), gate.clock(), gate.lockoutPolicy);
  return (
    <PageMessages>
      <>
        <AccountNotice notice={typeof notice === "string" ? notice : undefined} />
        {notice === "confirm_first" ? (
          <ConfirmFirstCard
            formToken={sessionFormToken(gate.config.session.secret, currentSid)}
            email={user.email}
            hasPasskey={passkeys.length > 0}
          />
        ) : null}
        <div className="card">
          <h1>Your account</h1>
          <dl>
            <dt>Email</dt>
            <dd data-testid="account-email">{user.email}</dd>
            <dt>Member since</dt>
            <dd>
              <LocalTime iso={user.createdAt.toISOString()} show="date" />
            </dd>
          </dl>
          {strangers.locked ? (
            <p className="banner warn" role="status" data-testid="new-devices-paused">
              {strangers.capped ? (
                "Sign-in to your account from new devices is paused after too many failed attempts. Devices you have signed in from before still work; signing in from one of them lifts the pause."
              ) : (
                <>
                  Sign-in to your account from new devices is paused after repeated failed attempts, until about{" "}
                  <LocalTime iso={new Date(strangers.lockedUntilMs).toISOString()} />. Devices you have signed in from before still work.
                </>
              )}
            </p>
          ) : null}
        </div>
        <SessionsSection userId={userId} currentSid={currentSid} />
        <PasskeysSection passkeys={passkeys} currentSid={currentSid} email={user.email} />
        <SecondFactorSection userId={userId} currentSid={currentSid} email={user.email} />
        <ChangePasswordSection currentSid={currentSid} email={user.email} hasOtherFactor={await hasOtherFactor(gate.prisma, userId)} />
        <div className="card">
          <h2>Recent security events</h2>
          <p className="hint">
            Addresses are shortened to the network they came from. If you do not recognise an event, change your password.
          </p>
          {events.length === 0 ? (
            <p>No events yet.</p>
          ) : (
            <table className="events" data-testid="security-events">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">What</th>
                  <th scope="col">From</th>
                </tr>
              </thead>
              <tbody>
                {events.map((event, i) => (
                  <tr key={i} data-kind={event.kind}>
                    <td>
                      <LocalTime iso={event.at.toISOString()} />
                    </td>
                    <td>{LABELS[event.kind] ?? event.kind}</td>
                    <td>
                      {event.browser ? `${event.browser}, ` : ""}
                      {event.address}
                      {event.sessionId !== null && event.sessionId === currentSid ? <strong> (this device)</strong> : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      </>
    </PageMessages>
  );
}

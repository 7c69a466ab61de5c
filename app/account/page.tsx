import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentSession } from "@/lib/auth/browser-session";
import { gatehouse } from "@/lib/app";
import { getTranslations } from "next-intl/server";
import { AccountTime, PausedUntil } from "./AccountTime";
import { browserText, eventText } from "@/lib/ui/account-labels";
import { sessionFormToken } from "@/lib/http/form-token";
import { AccountNotice } from "./AccountNotice";
import { ConfirmFirstCard } from "./ConfirmItsYou";
import { ChangePasswordSection } from "./ChangePasswordSection";
import { PasskeysSection } from "./PasskeysSection";
import { SecondFactorSection } from "./SecondFactorSection";
import { SessionsSection } from "./SessionsSection";
import { KnownDevicesSection } from "./KnownDevicesSection";
import { DownloadData } from "./DownloadData";
import { DeleteAccount } from "./DeleteAccount";
import { DELETE_WORDS, DOWNLOAD_WORDS, EMAIL_CHANGE_WORDS } from "./action-words";
import { ChangeEmail } from "./ChangeEmail";
import { PasskeyInvite } from "./PasskeyInvite";
import { passkeyObstacle } from "@/lib/passkeys/passkey-rules";
import { hasOtherFactor, hasPassword } from "@/lib/users/accounts";
import { ACCOUNT_CLIENT_NAMESPACES } from "./namespaces";
import { PageMessages } from "../components/PageMessages";

export const dynamic = "force-dynamic";

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getTranslations("account"))("title") };
}

/** A card of one account action: its heading, what it does, and its form. */
function ActionCard({ heading, hint, children }: { heading: string; hint: string; children: React.ReactNode }) {
  return (
    <div className="card">
      <h2>{heading}</h2>
      <p className="hint">{hint}</p>
      {children}
    </div>
  );
}

export default async function AccountPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { notice } = await searchParams;
  const session = await currentSession();
  if (!session) redirect("/sign-in?callbackUrl=%2Faccount");
  const { userId, sid: currentSid } = session;
  const gate = await gatehouse();
  const user = await gate.prisma.user.findUnique({
    where: { id: userId },
    select: { email: true, createdAt: true, passkeyInviteDismissedAt: true },
  });
  // A valid session for an account that no longer exists is treated as signed out.
  if (!user) redirect("/sign-in?callbackUrl=%2Faccount");
  const events = await gate.events.recent(userId, 20);
  // One read serves the passkey list and whether "Confirm it's you" can offer a passkey.
  const passkeys = await gate.passkeys.list(userId);
  // What strangers currently meet when they try this account (the owner's known devices are not affected).
  const strangers = await gate.lockouts.check(gate.usernameKey(user.email), gate.clock(), gate.config.lockout);
  const t = await getTranslations("account");
  // How "Confirm it's you" may ask: a passkey-only account is never shown a password field.
  const ways = { password: await hasPassword(gate.prisma, userId), passkey: passkeys.length > 0 };
  const actionProps = {
    formToken: sessionFormToken(gate.config.session.secret, currentSid),
    email: user.email,
    ways,
  };
  /** A client action's words, said here: only they ship to the browser, not their catalogue part. */
  const said = <Keys extends readonly string[]>(part: string, keys: Keys) =>
    Object.fromEntries(keys.map((key) => [key, t(`${part}.${key}`)])) as Record<Keys[number], string>;
  return (
    <PageMessages namespaces={ACCOUNT_CLIENT_NAMESPACES}>
      <>
        <AccountNotice notice={typeof notice === "string" ? notice : undefined} />
        {notice === "confirm_first" ? (
          <ConfirmFirstCard formToken={sessionFormToken(gate.config.session.secret, currentSid)} email={user.email} ways={ways} />
        ) : null}
        {/* No passkey: this session signed in with the password. Until the owner says "Don't ask again". */}
        {passkeys.length === 0 && user.passkeyInviteDismissedAt === null && !passkeyObstacle(gate.passkeySettings.rp.origin) ? (
          <PasskeyInvite formToken={actionProps.formToken} />
        ) : null}
        <div className="card">
          <h1>{t("heading")}</h1>
          <dl>
            <dt>{t("email")}</dt>
            <dd data-testid="account-email">{user.email}</dd>
            <dt>{t("memberSince")}</dt>
            <dd>
              <AccountTime iso={user.createdAt.toISOString()} show="date" />
            </dd>
          </dl>
          {strangers.locked ? (
            <p className="banner warn" role="status" data-testid="new-devices-paused">
              {strangers.capped ? t("pausedCapped") : <PausedUntil iso={new Date(strangers.lockedUntilMs).toISOString()} />}
            </p>
          ) : null}
        </div>
        <ActionCard heading={t("emailChange.heading")} hint={t("emailChange.hint")}>
          <ChangeEmail
            {...actionProps}
            words={{ ...said("emailChange", EMAIL_CHANGE_WORDS), sent: t("emailChange.sent", { email: "{email}" }) }}
          />
        </ActionCard>
        <SessionsSection userId={userId} currentSid={currentSid} />
        <KnownDevicesSection email={user.email} currentSid={currentSid} ways={ways} />
        <PasskeysSection passkeys={passkeys} currentSid={currentSid} email={user.email} hasPassword={ways.password} />
        <SecondFactorSection userId={userId} currentSid={currentSid} email={user.email} hasPassword={ways.password} />
        <ChangePasswordSection
          userId={userId}
          currentSid={currentSid}
          email={user.email}
          hasOtherFactor={await hasOtherFactor(gate.prisma, userId)}
        />
        <ActionCard heading={t("data.heading")} hint={t("data.hint")}>
          <DownloadData {...actionProps} words={said("data", DOWNLOAD_WORDS)} />
        </ActionCard>
        <ActionCard heading={t("delete.heading")} hint={t("delete.hint")}>
          <DeleteAccount {...actionProps} words={said("delete", DELETE_WORDS)} />
        </ActionCard>
        <div className="card">
          <h2>{t("events.heading")}</h2>
          <p className="hint">{t("events.hint")}</p>
          {events.length === 0 ? (
            <p>{t("events.none")}</p>
          ) : (
            <table className="events" data-testid="security-events">
              <thead>
                <tr>
                  <th scope="col">{t("events.when")}</th>
                  <th scope="col">{t("events.what")}</th>
                  <th scope="col">{t("events.from")}</th>
                </tr>
              </thead>
              <tbody>
                {events.map((event, i) => (
                  <tr key={i} data-kind={event.kind}>
                    <td>
                      <AccountTime iso={event.at.toISOString()} />
                    </td>
                    <td>{eventText(event.kind, t)}</td>
                    <td>
                      {event.browser
                        ? t("events.origin", { browser: browserText(event.browser, t), address: event.address })
                        : event.address}
                      {event.sessionId !== null && event.sessionId === currentSid ? <strong> {t("browser.thisDevice")}</strong> : null}
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

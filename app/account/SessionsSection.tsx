import type { ReactNode } from "react";
import { gatehouse } from "@/lib/app";
import { sessionFormToken } from "@/lib/http/form-token";
import { listLiveFamilies } from "@/lib/tokens/refresh-tokens";
import { getTranslations } from "next-intl/server";
import { browserText } from "@/lib/ui/account-labels";
import { AccountTime } from "./AccountTime";

type Props = { userId: string; currentSid: string };

/** One revoke button: a plain form post with the session's form token, so it works without JavaScript. */
function RevokeForm({
  formToken,
  kind,
  id,
  label,
  text,
}: {
  formToken: string;
  kind: "browser" | "api";
  id: string;
  label: string;
  text: string;
}) {
  return (
    <form method="post" action="/api/account/sessions/revoke" className="inline">
      <input type="hidden" name="formToken" value={formToken} />
      <input type="hidden" name="kind" value={kind} />
      <input type="hidden" name="id" value={id} />
      <button type="submit" className="secondary revoke" aria-label={label}>
        {text}
      </button>
    </form>
  );
}

type Row = { key: string; name: string; current: boolean; address: string; createdAt: Date; lastSeenAt: Date; revoke: ReactNode };

/**
 * One card per session, each value labelled (a table's columns lose their headers on a phone),
 * every time in the viewer's own zone (LocalTime, like the events below).
 */
/** Each list's words (keys of the `account` catalogue) and test id. */
const LISTS = {
  browser: { title: "sessions.browsers", nameLabel: "sessions.browser", lastLabel: "sessions.lastActive", testId: "browser-sessions" },
  api: { title: "sessions.apiSessions", nameLabel: "sessions.client", lastLabel: "sessions.lastUsed", testId: "api-sessions" },
} as const;

function SessionCards({ kind, rows, t }: { kind: keyof typeof LISTS; rows: Row[]; t: (key: string) => string }) {
  const { testId } = LISTS[kind];
  const [title, nameLabel, lastLabel] = [t(LISTS[kind].title), t(LISTS[kind].nameLabel), t(LISTS[kind].lastLabel)];
  return (
    <section aria-labelledby={`${testId}-title`}>
      <h3 id={`${testId}-title`}>{title}</h3>
      <ul className="session-cards" data-testid={testId}>
        {rows.map((row) => (
          <li key={row.key} className="session-card" data-current={row.current}>
            <dl>
              <dt>{nameLabel}</dt>
              <dd>
                {row.name}
                {row.current ? <strong> {t("browser.thisDevice")}</strong> : null}
              </dd>
              <dt>{t("sessions.network")}</dt>
              <dd className="address">{row.address}</dd>
              <dt>{t("sessions.signedIn")}</dt>
              <dd>
                <AccountTime iso={row.createdAt.toISOString()} />
              </dd>
              <dt>{lastLabel}</dt>
              <dd>
                <AccountTime iso={row.lastSeenAt.toISOString()} />
              </dd>
            </dl>
            {row.revoke}
          </li>
        ))}
      </ul>
    </section>
  );
}

/**
 * Every place the account is signed in: browser sessions (this one marked) and API sessions
 * (refresh-token families), each with a revoke button, and "sign out everywhere else".
 */
export async function SessionsSection({ userId, currentSid }: Props) {
  const gate = await gatehouse();
  const nowMs = gate.clock();
  const [browsers, families] = await Promise.all([
    gate.sessions.listLive(userId, nowMs, nowMs - gate.config.session.policy.idleMs),
    listLiveFamilies(gate.prisma, userId, nowMs),
  ]);
  const formToken = sessionFormToken(gate.config.session.secret, currentSid);
  const t = await getTranslations("account");
  const browserRows: Row[] = browsers.map((session) => ({
    key: session.id,
    name: browserText(session.browser, t),
    current: session.id === currentSid,
    address: session.address,
    createdAt: session.createdAt,
    // This session is active now, in this very request; lastSeenAt is written at most once per
    // touch interval (session-rules.ts), so for this one it would lag, and read as the sign-in.
    lastSeenAt: session.id === currentSid ? new Date(nowMs) : session.lastSeenAt,
    // This device signs out with "Sign out" (which also clears its cookie).
    revoke:
      session.id === currentSid ? null : (
        <RevokeForm
          formToken={formToken}
          kind="browser"
          id={session.id}
          label={t("sessions.revokeBrowser", { browser: browserText(session.browser, t), address: session.address })}
          text={t("sessions.revoke")}
        />
      ),
  }));
  const apiRows: Row[] = families.map((family) => ({
    key: family.familyId,
    name: browserText(family.client, t),
    current: false,
    address: family.address,
    createdAt: family.createdAt,
    lastSeenAt: family.lastUsedAt,
    revoke: (
      <RevokeForm
        formToken={formToken}
        kind="api"
        id={family.familyId}
        label={t("sessions.revokeApi", { client: browserText(family.client, t), address: family.address })}
        text={t("sessions.revoke")}
      />
    ),
  }));
  return (
    <div className="card">
      <h2>{t("sessions.heading")}</h2>
      <p className="hint">{t("sessions.hint")}</p>
      <SessionCards kind="browser" rows={browserRows} t={t} />
      {apiRows.length === 0 ? (
        <p className="hint" data-testid="api-sessions-none">
          {t("sessions.noApiSessions")}
        </p>
      ) : (
        <SessionCards kind="api" rows={apiRows} t={t} />
      )}
      {/* Only when there is somewhere else: with this session alone the button would do nothing. */}
      {browserRows.length + apiRows.length >= 2 ? (
        <form method="post" action="/api/account/sessions/revoke-others" className="spaced">
          <input type="hidden" name="formToken" value={formToken} />
          <button type="submit" className="secondary" data-testid="sign-out-everywhere-else">
            {t("sessions.signOutEverywhereElse")}
          </button>
        </form>
      ) : null}
    </div>
  );
}

import type { ReactNode } from "react";
import { gatehouse } from "@/lib/auth/gatehouse";
import { sessionFormToken } from "@/lib/http/form-token";
import { listLiveFamilies } from "@/lib/tokens/refresh-tokens";
import { LocalTime } from "../components/LocalTime";

type Props = { userId: string; currentSid: string };

/** One revoke button: a plain form post with the session's form token, so it works without JavaScript. */
function RevokeForm({ formToken, kind, id, label }: { formToken: string; kind: "browser" | "api"; id: string; label: string }) {
  return (
    <form method="post" action="/api/account/sessions/revoke" className="inline">
      <input type="hidden" name="formToken" value={formToken} />
      <input type="hidden" name="kind" value={kind} />
      <input type="hidden" name="id" value={id} />
      <button type="submit" className="secondary revoke" aria-label={label}>
        Revoke
      </button>
    </form>
  );
}

type Row = { key: string; name: string; current: boolean; address: string; createdAt: Date; lastSeenAt: Date; revoke: ReactNode };

/** Last active within a minute of signing in reads as one moment: said once, not as two equal times. */
const SAME_MOMENT_MS = 60_000;

/**
 * One card per session, each value labelled (a table's columns lose their headers on a phone),
 * every time in the viewer's own zone (LocalTime, like the events below).
 */
function SessionCards({
  title,
  nameLabel,
  lastLabel,
  rows,
  testId,
}: {
  title: string;
  nameLabel: string;
  lastLabel: string;
  rows: Row[];
  testId: string;
}) {
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
                {row.current ? <strong> (this device)</strong> : null}
              </dd>
              <dt>Network</dt>
              <dd className="address">{row.address}</dd>
              <dt>Signed in</dt>
              <dd>
                <LocalTime iso={row.createdAt.toISOString()} />
              </dd>
              <dt>{lastLabel}</dt>
              <dd>
                {row.lastSeenAt.getTime() - row.createdAt.getTime() < SAME_MOMENT_MS ? (
                  "When signing in"
                ) : (
                  <LocalTime iso={row.lastSeenAt.toISOString()} />
                )}
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
    gate.sessions.listLive(userId, nowMs, nowMs - gate.sessionPolicy.idleMs),
    listLiveFamilies(gate.prisma, userId, nowMs),
  ]);
  const formToken = sessionFormToken(gate.config.session.secret, currentSid);
  const browserRows: Row[] = browsers.map((session) => ({
    key: session.id,
    name: session.browser,
    current: session.id === currentSid,
    address: session.address,
    createdAt: session.createdAt,
    lastSeenAt: session.lastSeenAt,
    // This device signs out with "Sign out" (which also clears its cookie).
    revoke:
      session.id === currentSid ? null : (
        <RevokeForm
          formToken={formToken}
          kind="browser"
          id={session.id}
          label={`Revoke ${session.browser} session from ${session.address}`}
        />
      ),
  }));
  const apiRows: Row[] = families.map((family) => ({
    key: family.familyId,
    name: family.client,
    current: false,
    address: family.address,
    createdAt: family.createdAt,
    lastSeenAt: family.lastUsedAt,
    revoke: (
      <RevokeForm
        formToken={formToken}
        kind="api"
        id={family.familyId}
        label={`Revoke API session ${family.client} from ${family.address}`}
      />
    ),
  }));
  return (
    <div className="card">
      <h2>Where you are signed in</h2>
      <p className="hint">Revoking a browser session signs it out on its next request; revoking an API session ends its refresh token.</p>
      <SessionCards title="Browsers" nameLabel="Browser" lastLabel="Last active" rows={browserRows} testId="browser-sessions" />
      {apiRows.length === 0 ? (
        <p className="hint" data-testid="api-sessions-none">
          No API sessions.
        </p>
      ) : (
        <SessionCards title="API sessions" nameLabel="Client" lastLabel="Last used" rows={apiRows} testId="api-sessions" />
      )}
      {/* Only when there is somewhere else: with this session alone the button would do nothing. */}
      {browserRows.length + apiRows.length >= 2 ? (
        <form method="post" action="/api/account/sessions/revoke-others" className="spaced">
          <input type="hidden" name="formToken" value={formToken} />
          <button type="submit" className="secondary" data-testid="sign-out-everywhere-else">
            Sign out everywhere else
          </button>
        </form>
      ) : null}
    </div>
  );
}

import type { ReactNode } from "react";
import { gatehouse } from "@/lib/auth/gatehouse";
import { sessionFormToken } from "@/lib/http/form-token";
import { listLiveFamilies } from "@/lib/tokens/refresh-tokens";
import { UtcTime } from "../components/UtcTime";

type Props = { userId: string; currentSid: string };

/** One revoke button: a plain form post with the session's form token, so it works without JavaScript. */
function RevokeForm({ formToken, kind, id, label }: { formToken: string; kind: "browser" | "api"; id: string; label: string }) {
  return (
    <form method="post" action="/api/account/sessions/revoke" className="inline">
      <input type="hidden" name="formToken" value={formToken} />
      <input type="hidden" name="kind" value={kind} />
      <input type="hidden" name="id" value={id} />
      <button type="submit" className="link" aria-label={label}>
        Revoke
      </button>
    </form>
  );
}

type Row = { key: string; name: string; current: boolean; address: string; createdAt: Date; lastSeenAt: Date; revoke: ReactNode };

function SessionTable({
  caption,
  nameHeader,
  lastSeenHeader,
  rows,
  testId,
}: {
  caption: string;
  nameHeader: string;
  lastSeenHeader: string;
  rows: Row[];
  testId: string;
}) {
  return (
    <table className="events" data-testid={testId}>
      <caption className="hint">{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{nameHeader}</th>
          <th scope="col">From</th>
          <th scope="col">Signed in</th>
          <th scope="col">{lastSeenHeader}</th>
          <th scope="col">
            <span className="sr-only">Action</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.key} data-current={row.current}>
            <td>
              {row.name}
              {row.current ? <strong> (this device)</strong> : null}
            </td>
            <td>{row.address}</td>
            <td>
              <UtcTime at={row.createdAt} />
            </td>
            <td>
              <UtcTime at={row.lastSeenAt} />
            </td>
            <td>{row.revoke}</td>
          </tr>
        ))}
      </tbody>
    </table>
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
  const formToken = sessionFormToken(gate.config.NEXTAUTH_SECRET, currentSid);
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
      <SessionTable caption="Browsers" nameHeader="Browser" lastSeenHeader="Last seen" rows={browserRows} testId="browser-sessions" />
      {apiRows.length === 0 ? (
        <p className="hint" data-testid="api-sessions-none">
          No API sessions.
        </p>
      ) : (
        <SessionTable caption="API sessions" nameHeader="Client" lastSeenHeader="Last used" rows={apiRows} testId="api-sessions" />
      )}
      <form method="post" action="/api/account/sessions/revoke-others" className="spaced">
        <input type="hidden" name="formToken" value={formToken} />
        <button type="submit" data-testid="sign-out-everywhere-else">
          Sign out everywhere else
        </button>
      </form>
    </div>
  );
}

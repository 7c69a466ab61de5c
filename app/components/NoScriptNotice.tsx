/**
 * Says why a form did nothing: the robot check (ALTCHA) is a proof of work that runs in the
 * browser, so signing in and registering need JavaScript. Server-rendered, so it shows when
 * JavaScript is off (noscript) and after a form was sent before the page was ready (`notice`).
 */
export function NoScriptNotice({ posted, action }: { posted: boolean; action: string }) {
  const message = `The “I'm not a robot” check runs in your browser, so ${action} needs JavaScript.`;
  return (
    <>
      <noscript>
        <p className="banner warn" data-testid="noscript-notice">
          {message} Turn JavaScript on for this site, then reload the page.
        </p>
      </noscript>
      {posted ? (
        <p className="banner warn" role="status" data-testid="posted-too-early">
          The form was sent before the page was ready, so nothing was checked and your password went nowhere. {message} Wait a moment and
          try again.
        </p>
      ) : null}
    </>
  );
}

/**
 * Says why a form did nothing: the robot check (ALTCHA) is a proof of work that runs in the
 * browser, so signing in and registering need JavaScript. Server-rendered, so it shows when
 * JavaScript is off (noscript) and after a form was sent before the page was ready (`notice`).
 * One banner either way: after such a post the server cannot tell whether JavaScript is off or was
 * only late, so that banner says what to do in both cases instead of a second, noscript one.
 */
export function NoScriptNotice({ posted, action }: { posted: boolean; action: string }) {
  const needs = `The robot check runs in your browser, so ${action} needs JavaScript.`;
  if (posted) {
    return (
      <p className="banner warn" role="status" data-testid="posted-too-early">
        Nothing was sent: the form went off before the page was ready, so your password went nowhere. {needs} If JavaScript is off, turn it
        on for this site and reload the page; otherwise try again in a moment.
      </p>
    );
  }
  return (
    <noscript>
      <p className="banner warn" data-testid="noscript-notice">
        {needs} Turn JavaScript on for this site, then reload the page.
      </p>
    </noscript>
  );
}

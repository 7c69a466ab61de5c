import type { MailMessage } from "@/lib/mail/types";

/**
 * Every email Gatehouse sends, rendered from plain values. Rules: no tracking (no remote images,
 * no per-recipient URLs but the single-use link itself), no secret but that link, and nothing a
 * reader of the message could use that the account page does not already show.
 */

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

type Part = { text: string } | { link: { label: string; url: string } };

function render(app: string, to: string, kind: string, subject: string, parts: Part[]): MailMessage {
  const text = parts.map((part) => ("text" in part ? part.text : `${part.link.label}:\n${part.link.url}`)).join("\n\n");
  const html = parts
    .map((part) =>
      "text" in part
        ? `<p>${escapeHtml(part.text)}</p>`
        : `<p><a href="${escapeHtml(part.link.url)}">${escapeHtml(part.link.label)}</a></p><p style="font-size:12px;color:#555">${escapeHtml(part.link.url)}</p>`,
    )
    .join("\n");
  const links = parts.flatMap((part) => ("link" in part ? [part.link] : []));
  return {
    to,
    kind,
    subject,
    text: `${text}\n\n— ${app}\n`,
    html: `<!doctype html><html><body style="font-family:sans-serif;line-height:1.5">${html}<p>— ${app}</p></body></html>`,
    links,
  };
}

/** Where the event happened, as the account page shows it. */
export type NoticeOrigin = { browser: string | null; address: string; atMs: number };

function originLine(origin: NoticeOrigin): string {
  const when = new Date(origin.atMs).toISOString().replace("T", " ").slice(0, 16);
  return `When: ${when} UTC. Browser: ${origin.browser ?? "unknown"}. Network: ${origin.address}.`;
}

/** Every message, signed with `app`, the instance's BRAND_NAME. */
export const brandedMessages = (app: string) => ({
  verifyEmail: (to: string, url: string, lifetimeHours: number) =>
    render(app, to, "verify_email", `Confirm your email address for ${app}`, [
      {
        text: `Someone (we hope you) created a ${app} account with this address. Confirm it, with the password chosen for the account, to start signing in.`,
      },
      { link: { label: "Confirm my email address", url } },
      {
        text: `The link works once, for ${lifetimeHours} hours. If you did not create an account, ignore this message: nothing happens without the link.`,
      },
    ]),

  addressTaken: (to: string, signInUrl: string, forgotUrl: string) =>
    render(app, to, "address_taken", `Someone tried to create a ${app} account with your address`, [
      { text: `Someone tried to create a ${app} account with this address, but it already has one. No new account was made.` },
      { text: "If that was you, sign in, or reset your password if you have forgotten it." },
      { link: { label: "Sign in", url: signInUrl } },
      { link: { label: "Reset my password", url: forgotUrl } },
      { text: "If it was not you, you need do nothing: your account and password are unchanged." },
    ]),

  passwordReset: (to: string, url: string, lifetimeMinutes: number) =>
    render(app, to, "password_reset", `Reset your ${app} password`, [
      { text: `Someone asked to reset the password of the ${app} account with this address.` },
      { link: { label: "Choose a new password", url } },
      {
        text: `The link works once, for ${lifetimeMinutes} minutes. A newer request or a password change ends it. If you did not ask, ignore this message: your password is unchanged.`,
      },
    ]),

  lockedOut: (to: string, url: string, lifetimeMinutes: number, origin: NoticeOrigin) =>
    render(app, to, "locked_out", `Someone is trying to sign in to your ${app} account`, [
      { text: "Sign-in to your account was paused after several wrong passwords." },
      { text: originLine(origin) },
      { text: "If that was you, this link lets this browser sign in again at once (you still type your password):" },
      { link: { label: "Let me sign in on this browser", url } },
      {
        text: `The link works once, for ${lifetimeMinutes} minutes. If it was not you, your password held; consider changing it if it is used anywhere else. Devices you have signed in with before are not paused.`,
      },
    ]),

  deviceCode: (to: string, code: string, lifetimeMinutes: number, origin: NoticeOrigin, forgotUrl: string) =>
    render(app, to, "device_code", `Your code to sign in to ${app} on a new device`, [
      {
        text: `Your password was just entered on a device or browser this account has not used before. To finish signing in there, enter this code: ${code}`,
      },
      { text: originLine(origin) },
      {
        text: `The code works once, for ${lifetimeMinutes} minutes, and only in the browser or app that asked for it. We never ask for it by phone or email: do not pass it on.`,
      },
      { text: "If that was not you, someone else has your password: reset it now, and change it on every site where you used it." },
      { link: { label: "Reset my password", url: forgotUrl } },
    ]),

  newDeviceSignIn: (to: string, origin: NoticeOrigin, forgotUrl: string) =>
    render(app, to, "new_device_sign_in", `New sign-in to your ${app} account`, [
      { text: "Your account was signed in to from a device or browser it had not been used from before." },
      { text: originLine(origin) },
      { text: "If that was you, there is nothing to do. If not, reset your password now: that signs out every session." },
      { link: { label: "Reset my password", url: forgotUrl } },
    ]),

  passwordChanged: (to: string, origin: NoticeOrigin, forgotUrl: string) =>
    render(app, to, "password_changed", `Your ${app} password was changed`, [
      { text: "The password of your account was changed, and every other session was signed out." },
      { text: originLine(origin) },
      { text: "If that was not you, reset your password now." },
      { link: { label: "Reset my password", url: forgotUrl } },
    ]),

  passwordBreached: (to: string, origin: NoticeOrigin, forgotUrl: string) =>
    render(app, to, "password_breached", `Your ${app} password has appeared in a data breach`, [
      {
        text: "Your password was just used to sign in, and it is on a public list of passwords leaked from other sites, which attackers replay everywhere. You are asked to choose a new one before anything else.",
      },
      { text: originLine(origin) },
      { text: "If that sign-in was not you, someone else has your password: reset it now, and change it on every site where you used it." },
      { link: { label: "Reset my password", url: forgotUrl } },
    ]),

  passwordWasReset: (to: string, origin: NoticeOrigin, forgotUrl: string) =>
    render(app, to, "password_was_reset", `Your ${app} password was reset`, [
      { text: "The password of your account was reset from an emailed link, and every session was signed out." },
      { text: originLine(origin) },
      { text: "If that was not you, someone can read your email: secure your mailbox, then reset your password again." },
      { link: { label: "Reset my password", url: forgotUrl } },
    ]),

  refreshTokenReused: (to: string, origin: NoticeOrigin, forgotUrl: string) =>
    render(app, to, "refresh_token_reused", `A ${app} session was ended because it may have been copied`, [
      {
        text: "An app signed in to your account presented a session token that had already been used. That happens when someone else holds a copy, so the session was ended everywhere.",
      },
      { text: originLine(origin) },
      { text: "Sign in again in your app. If you see this often, or did not use an app, reset your password." },
      { link: { label: "Reset my password", url: forgotUrl } },
    ]),

  passkeyAdded: (to: string, origin: NoticeOrigin, forgotUrl: string, name = "") =>
    render(app, to, "passkey_added", `A passkey was added to your ${app} account`, [
      { text: `A passkey${name ? ` named "${name}"` : ""} can now sign in to your account without its password.` },
      { text: originLine(origin) },
      {
        text: "If that was you, there is nothing to do. If not, someone can sign in as you without your password: reset it now and tick “Also remove every passkey” on the reset page, which signs out every session and removes every passkey.",
      },
      { link: { label: "Reset my password", url: forgotUrl } },
    ]),

  passkeyRemoved: (to: string, origin: NoticeOrigin, forgotUrl: string, name = "") =>
    render(app, to, "passkey_removed", `A passkey was removed from your ${app} account`, [
      { text: `The passkey${name ? ` named "${name}"` : ""} can no longer sign in to your account.` },
      { text: originLine(origin) },
      { text: "If that was not you, reset your password now: that signs out every session." },
      { link: { label: "Reset my password", url: forgotUrl } },
    ]),

  passkeyCounterRegressed: (to: string, origin: NoticeOrigin, forgotUrl: string, name = "") =>
    render(app, to, "passkey_counter_regressed", `A sign-in with one of your ${app} passkeys was refused`, [
      {
        text: `A sign-in with your passkey${name ? ` "${name}"` : ""} was refused: the security key reported a use count lower than one it reported before, which happens when a key has been copied.`,
      },
      { text: originLine(origin) },
      { text: "If you did not try to sign in just now, remove that passkey from your account page and reset your password." },
      { link: { label: "Reset my password", url: forgotUrl } },
    ]),

  factorAdded: (to: string, origin: NoticeOrigin, forgotUrl: string, what = "A second step") =>
    render(app, to, "factor_added", `A second sign-in step was turned on for your ${app} account`, [
      { text: `${what} is now asked for after your password when you sign in.` },
      { text: originLine(origin) },
      {
        text: "Keep your recovery codes somewhere safe: they let you in if you lose your phone or key. If this was not you, reset your password now and contact support.",
      },
      { link: { label: "Reset my password", url: forgotUrl } },
    ]),

  factorRemoved: (to: string, origin: NoticeOrigin, forgotUrl: string, what = "A second step") =>
    render(app, to, "factor_removed", `A second sign-in step was turned off for your ${app} account`, [
      { text: `${what} is no longer asked for after your password.` },
      { text: originLine(origin) },
      { text: "If that was not you, reset your password now: that signs out every session." },
      { link: { label: "Reset my password", url: forgotUrl } },
    ]),

  recoveryCodeUsed: (to: string, origin: NoticeOrigin, forgotUrl: string, left = "") =>
    render(app, to, "recovery_code_used", `A recovery code was used to sign in to your ${app} account`, [
      { text: `One of your recovery codes was used to finish a sign-in. It no longer works${left ? `; ${left} left` : ""}.` },
      { text: originLine(origin) },
      {
        text: "If that was you, consider getting new codes on your account page. If not, someone has your password and a code: reset your password now.",
      },
      { link: { label: "Reset my password", url: forgotUrl } },
    ]),

  recoveryCodesReplaced: (to: string, origin: NoticeOrigin, forgotUrl: string) =>
    render(app, to, "recovery_codes_replaced", `New recovery codes for your ${app} account`, [
      { text: "New recovery codes were made for your account; the old ones no longer work." },
      { text: originLine(origin) },
      { text: "If that was not you, reset your password now." },
      { link: { label: "Reset my password", url: forgotUrl } },
    ]),

  factorsRemovedByOperator: (to: string, origin: NoticeOrigin, forgotUrl: string) =>
    render(app, to, "factors_removed_by_operator", `An administrator turned off the second sign-in step of your ${app} account`, [
      {
        text: "At your request, an administrator removed your authenticator app and recovery codes, and stopped asking for a passkey after your password. Your password alone now signs you in.",
      },
      { text: originLine(origin) },
      { text: "Sign in and set up a second step again from your account page. If you did not ask for this, reset your password now." },
      { link: { label: "Reset my password", url: forgotUrl } },
    ]),
});

export type NoticeKind =
  | "password_breached"
  | "new_device_sign_in"
  | "password_changed"
  | "password_was_reset"
  | "refresh_token_reused"
  | "passkey_added"
  | "passkey_removed"
  | "passkey_counter_regressed"
  | "factor_added"
  | "factor_removed"
  | "recovery_code_used"
  | "recovery_codes_replaced"
  | "factors_removed_by_operator";

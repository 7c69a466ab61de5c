import type { SecurityEventKind } from "@/lib/events/security-events";
import { API_CLIENT_LABEL, PASSKEY_SUFFIX, UNKNOWN_BROWSER } from "@/lib/sessions/browser-label";

type T = (key: string, values?: Record<string, string>) => string;

/**
 * A stored browser label ("Firefox on Linux", "Unknown browser", "API client", "… (passkey)"),
 * written in English when the session or event was recorded, said in the page's language. The
 * browser's and the system's names are bowser's own, the same in every language.
 */
export function browserText(label: string, t: T): string {
  if (label.endsWith(PASSKEY_SUFFIX)) return t("browser.withPasskey", { label: browserText(label.slice(0, -PASSKEY_SUFFIX.length), t) });
  if (label === UNKNOWN_BROWSER) return t("browser.unknown");
  if (label === API_CLIENT_LABEL) return t("browser.apiClient");
  const on = label.indexOf(" on ");
  if (on < 0) return label;
  const browser = label.slice(0, on);
  return t("browser.on", {
    browser: browser === UNKNOWN_BROWSER ? t("browser.unknown") : browser,
    system: label.slice(on + " on ".length),
  });
}

// Every kind, so the type names a kind the catalogue must say (lib/ui/account-labels.test.ts).
const KINDS: Record<SecurityEventKind, true> = {
  sign_in_failed: true,
  sign_in_unconfirmed: true,
  sign_in_succeeded: true,
  locked: true,
  untrusted_paused: true,
  refresh_family_created: true,
  browser_session_revoked: true,
  api_session_revoked: true,
  signed_out_everywhere_else: true,
  password_changed: true,
  admin_unlocked: true,
  admin_sessions_revoked: true,
  email_verified: true,
  password_reset: true,
  unlock_link_used: true,
  mailbox_proved: true,
  refresh_token_reused: true,
  passkey_added: true,
  passkey_removed: true,
  passkey_counter_regressed: true,
  admin_passkey_removed: true,
  passkey_renamed: true,
  passkeys_removed_by_reset: true,
  passkeys_removed_by_recovery: true,
  reauthenticated: true,
  totp_added: true,
  totp_removed: true,
  passkey_second_factor_on: true,
  passkey_second_factor_off: true,
  recovery_codes_replaced: true,
  recovery_code_used: true,
  second_step_due: true,
  second_step_failed: true,
  device_confirmation_due: true,
  device_confirmation_failed: true,
  admin_factors_removed: true,
  password_found_breached: true,
  device_forgotten: true,
  data_exported: true,
  browser_remembered: true,
  second_step_remembered: true,
  email_change_requested: true,
  email_changed: true,
  email_change_undone: true,
  admin_email_changed: true,
  session_ended_not_me: true,
};
export const EVENT_KINDS = Object.keys(KINDS) as SecurityEventKind[];

/** What a security event was, in the page's language (a kind from a newer version shows as its code). */
export function eventText(kind: string, t: T): string {
  return Object.hasOwn(KINDS, kind) ? t(`events.kind.${kind}`) : kind;
}

import { browserText } from "@/lib/ui/account-labels";
import type { MailBrand } from "@/lib/brand/brand";
import type { Translate } from "@/lib/i18n/i18n";
import { sentenceFor } from "@/lib/i18n/sentence";
import type { MailMessage } from "@/lib/mail/types";
import { REFUSAL_REASONS, type DigestCheck, type DigestFigures } from "@/lib/digest/figures";
import { WEEK_MS } from "@/lib/digest/tally";

/**
 * Every email Gatehouse sends, in the account's language (the `mail` catalogue), as HTML and
 * plain text from the same parts: the brand's name and logo, what happened, one button and its
 * link spelled out, the time in the owner's zone and in UTC. Rules: no tracking (no per-recipient
 * URL but the single-use link itself; the logo is the instance's one public file), no secret but
 * that link, nothing a reader could use that the account page does not already show, and
 * subjects that say what happened without alarm.
 */

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** Text, the one button (the action the mail is for), or a secondary link written out as text. */
type Part = { text: string } | { button: { label: string; url: string } } | { link: { label: string; url: string } };

/** Where the event happened, as the account page shows it. */
export type NoticeOrigin = { browser: string | null; address: string; atMs: number };

export type MailSettings = {
  brand: MailBrand;
  t: Translate;
  locale: string;
  /** The owner's IANA zone (from their browser, validated); null: UTC only. */
  timeZone: string | null;
};

function layout(
  settings: MailSettings,
  to: string,
  kind: string,
  subject: string,
  parts: Part[],
  whyKey = "mail.common.whyThisMail",
): MailMessage {
  const { brand, t } = settings;
  const app = brand.name;
  const signature = t("mail.common.signature", { app });
  const why = t(whyKey, { app });
  // A support address is said as the address (a mailto: link in HTML), never as "mailto:…" text.
  const supportLabel = brand.supportUrl?.replace(/^mailto:/i, "") ?? null;
  const support = supportLabel ? t("mail.common.footerSupport", { url: supportLabel }) : null;
  const supportHtml =
    brand.supportUrl && supportLabel
      ? escapeHtml(t("mail.common.footerSupport", { url: "\u0000" })).replace(
          "\u0000",
          `<a href="${escapeHtml(brand.supportUrl)}" style="color:${escapeHtml(brand.color)}">${escapeHtml(supportLabel)}</a>`,
        )
      : null;
  const text = [
    ...parts.map((part) =>
      "text" in part ? part.text : "button" in part ? `${part.button.label}:\n${part.button.url}` : `${part.link.label}\n${part.link.url}`,
    ),
    signature,
    why,
    ...(support ? [support] : []),
  ].join("\n\n");
  const accent = escapeHtml(brand.color);
  const body = parts
    .map((part) => {
      if ("text" in part) return `<p style="margin:0 0 16px">${escapeHtml(part.text).replace(/\n/g, "<br>")}</p>`;
      if ("link" in part) {
        return `<p style="margin:0 0 16px">${escapeHtml(part.link.label)}<br><a href="${escapeHtml(part.link.url)}" style="color:${accent}">${escapeHtml(part.link.url)}</a></p>`;
      }
      const url = escapeHtml(part.button.url);
      return [
        `<p style="margin:24px 0"><a href="${url}" style="display:inline-block;background:${accent};color:#ffffff;text-decoration:none;font-weight:bold;padding:12px 20px;border-radius:6px">${escapeHtml(part.button.label)}</a></p>`,
        `<p style="margin:0 0 16px;font-size:13px;color:#4a4a4a">${escapeHtml(t("mail.common.linkFallback"))}<br><a href="${url}" style="color:${accent};word-break:break-all">${url}</a></p>`,
      ].join("\n");
    })
    .join("\n");
  const logo = brand.logoUrl
    ? `<img src="${escapeHtml(brand.logoUrl)}" alt="" width="${brand.logoWidthPx}" height="${brand.logoHeightPx}" style="vertical-align:middle;margin-right:8px;max-width:100%;height:auto">`
    : "";
  const html = [
    `<!doctype html><html lang="${escapeHtml(settings.locale)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">`,
    `<title>${escapeHtml(subject)}</title></head>`,
    `<body style="margin:0;padding:0;background:#f4f5f7">`,
    `<main style="max-width:560px;margin:0 auto;padding:24px;font-family:system-ui,sans-serif;font-size:16px;line-height:1.5;color:#1a1a1a;background:#ffffff">`,
    `<h1 style="font-size:20px;margin:0 0 24px">${logo}${escapeHtml(app)}</h1>`,
    body,
    `<p style="margin:24px 0 0">${escapeHtml(signature)}</p>`,
    `<p style="margin:16px 0 0;font-size:13px;color:#4a4a4a">${escapeHtml(why)}${supportHtml ? `<br>${supportHtml}` : ""}</p>`,
    `</main></body></html>`,
  ].join("\n");
  const links = parts.flatMap((part) => ("button" in part ? [part.button] : "link" in part ? [part.link] : []));
  return { to, kind, subject, text: `${text}\n`, html, links };
}

/** "2026-12-01 20:47": the UTC moment every reader can compare, whatever their language. */
function utcMoment(atMs: number): string {
  return new Date(atMs).toISOString().replace("T", " ").slice(0, 16);
}

function originParts(settings: MailSettings, origin: NoticeOrigin): Part {
  const { t, locale, timeZone } = settings;
  const utc = utcMoment(origin.atMs);
  const tag = locale === "xx" ? "en" : locale;
  const when =
    timeZone && timeZone !== "UTC"
      ? t("mail.common.when", {
          local: new Intl.DateTimeFormat(tag, { dateStyle: "long", timeStyle: "short", timeZone }).format(origin.atMs),
          zone: timeZone,
          utc,
        })
      : t("mail.common.whenUtc", { utc });
  // The label is stored in English ("Firefox on Linux"); said in the mail's language as the account page says it.
  const label = origin.browser ? browserText(origin.browser, (key, values) => t(`account.${key}`, values)) : null;
  const browser = label ? t("mail.common.browser", { browser: label }) : t("mail.common.browserUnknown");
  return { text: `${when} ${browser} ${t("mail.common.network", { address: origin.address })}` };
}

/** A factor's name as the factor modules write it in English ("An authenticator app"), in the mail's language. */
function factorName(settings: MailSettings, what: string): string {
  const found = sentenceFor(what);
  return found && found.key.startsWith("mail.factor.") ? settings.t(found.key) : what;
}

/** Every message, in `settings`' language, signed with the instance's BRAND_NAME. */
export function brandedMessages(settings: MailSettings) {
  const { t } = settings;
  const app = settings.brand.name;
  const k = (kind: string, key: string, values: Record<string, string | number> = {}) => t(`mail.${kind}.${key}`, { app, ...values });
  const reset = (forgotUrl: string): Part => ({ button: { label: t("mail.common.resetButton"), url: forgotUrl } });
  /** A security notice: what happened, where and when, what to do, and the way out. */
  const notice = (kind: string, to: string, origin: NoticeOrigin, forgotUrl: string, first: string) =>
    layout(settings, to, kind, k(kind, "subject"), [
      { text: first },
      originParts(settings, origin),
      { text: k(kind, "p2") },
      reset(forgotUrl),
    ]);
  const named = (kind: string, name: string) => (name ? k(kind, "p1Named", { name }) : k(kind, "p1"));
  /** A factor added or removed: `what` is its kind ("totp"), or empty for "a second step". */
  const factorNotice = (kind: "factor_added" | "factor_removed", to: string, origin: NoticeOrigin, forgotUrl: string, what: string) =>
    notice(kind, to, origin, forgotUrl, k(kind, "p1", { what: what ? factorName(settings, what) : t("mail.factor.secondStep") }));

  return {
    deviceCode: (to: string, code: string, validUntilMs: number, origin: NoticeOrigin, forgotUrl: string) =>
      layout(settings, to, "device_code", k("device_code", "subject"), [
        { text: k("device_code", "p1", { code }) },
        originParts(settings, origin),
        // HH:MM in UTC, as the mail's "when" line gives it: the code ends with the sign-in that asked.
        { text: k("device_code", "p2", { until: utcMoment(validUntilMs).slice(-5) }) },
        { text: k("device_code", "p3") },
        reset(forgotUrl),
      ]),

    verifyEmail: (to: string, url: string, lifetimeHours: number) =>
      layout(settings, to, "verify_email", k("verify_email", "subject"), [
        { text: k("verify_email", "p1") },
        { button: { label: k("verify_email", "button"), url } },
        { text: k("verify_email", "p2", { hours: lifetimeHours }) },
      ]),

    passkeyStart: (to: string, url: string, lifetimeHours: number) =>
      layout(settings, to, "passkey_start", k("passkey_start", "subject"), [
        { text: k("passkey_start", "p1") },
        { button: { label: k("passkey_start", "button"), url } },
        { text: k("passkey_start", "p2", { hours: lifetimeHours }) },
      ]),

    passkeyRecovery: (to: string, url: string, lifetimeMinutes: number) =>
      layout(settings, to, "passkey_recovery", k("passkey_recovery", "subject"), [
        { text: k("passkey_recovery", "p1") },
        { button: { label: k("passkey_recovery", "button"), url } },
        { text: k("passkey_recovery", "p2", { minutes: lifetimeMinutes }) },
      ]),

    addressTaken: (to: string, signInUrl: string, forgotUrl: string) =>
      layout(settings, to, "address_taken", k("address_taken", "subject"), [
        { text: k("address_taken", "p1") },
        { text: k("address_taken", "p2") },
        { button: { label: k("address_taken", "button"), url: signInUrl } },
        { link: { label: k("address_taken", "forgot"), url: forgotUrl } },
        { text: k("address_taken", "p3") },
      ]),

    passwordReset: (to: string, url: string, lifetimeMinutes: number) =>
      layout(settings, to, "password_reset", k("password_reset", "subject"), [
        { text: k("password_reset", "p1") },
        { button: { label: k("password_reset", "button"), url } },
        { text: k("password_reset", "p2", { minutes: lifetimeMinutes }) },
      ]),

    lockedOut: (to: string, url: string, lifetimeMinutes: number, origin: NoticeOrigin) =>
      layout(settings, to, "locked_out", k("locked_out", "subject"), [
        { text: k("locked_out", "p1") },
        originParts(settings, origin),
        { text: k("locked_out", "p2") },
        { button: { label: k("locked_out", "button"), url } },
        { text: k("locked_out", "p3", { minutes: lifetimeMinutes }) },
      ]),

    // "This wasn't me" first where there is one: it ends that sign-in now; the reset follows.
    newDeviceSignIn: (to: string, origin: NoticeOrigin, forgotUrl: string, notMeUrl = "") =>
      notMeUrl
        ? layout(settings, to, "new_device_sign_in", k("new_device_sign_in", "subject"), [
            { text: k("new_device_sign_in", "p1") },
            originParts(settings, origin),
            { text: k("new_device_sign_in", "p2NotMe") },
            { button: { label: k("new_device_sign_in", "notMe"), url: notMeUrl } },
            { link: { label: t("mail.common.resetButton"), url: forgotUrl } },
          ])
        : notice("new_device_sign_in", to, origin, forgotUrl, k("new_device_sign_in", "p1")),
    passwordChanged: (to: string, origin: NoticeOrigin, forgotUrl: string) =>
      notice("password_changed", to, origin, forgotUrl, k("password_changed", "p1")),
    passwordBreached: (to: string, origin: NoticeOrigin, forgotUrl: string) =>
      notice("password_breached", to, origin, forgotUrl, k("password_breached", "p1")),
    passwordWasReset: (to: string, origin: NoticeOrigin, forgotUrl: string) =>
      notice("password_was_reset", to, origin, forgotUrl, k("password_was_reset", "p1")),
    refreshTokenReused: (to: string, origin: NoticeOrigin, forgotUrl: string) =>
      notice("refresh_token_reused", to, origin, forgotUrl, k("refresh_token_reused", "p1")),
    passkeyAdded: (to: string, origin: NoticeOrigin, forgotUrl: string, name = "") =>
      notice("passkey_added", to, origin, forgotUrl, named("passkey_added", name)),
    passkeyRemoved: (to: string, origin: NoticeOrigin, forgotUrl: string, name = "") =>
      notice("passkey_removed", to, origin, forgotUrl, named("passkey_removed", name)),
    passkeyCounterRegressed: (to: string, origin: NoticeOrigin, forgotUrl: string, name = "") =>
      notice("passkey_counter_regressed", to, origin, forgotUrl, named("passkey_counter_regressed", name)),
    factorAdded: (to: string, origin: NoticeOrigin, forgotUrl: string, what = "") =>
      factorNotice("factor_added", to, origin, forgotUrl, what),
    factorRemoved: (to: string, origin: NoticeOrigin, forgotUrl: string, what = "") =>
      factorNotice("factor_removed", to, origin, forgotUrl, what),
    recoveryCodeUsed: (to: string, origin: NoticeOrigin, forgotUrl: string, left = "") =>
      notice(
        "recovery_code_used",
        to,
        origin,
        forgotUrl,
        left ? k("recovery_code_used", "p1Left", { left }) : k("recovery_code_used", "p1"),
      ),
    recoveryCodesReplaced: (to: string, origin: NoticeOrigin, forgotUrl: string) =>
      notice("recovery_codes_replaced", to, origin, forgotUrl, k("recovery_codes_replaced", "p1")),
    factorsRemovedByOperator: (to: string, origin: NoticeOrigin, forgotUrl: string) =>
      notice("factors_removed_by_operator", to, origin, forgotUrl, k("factors_removed_by_operator", "p1")),
    confirmEmailChange: (to: string, url: string, lifetimeHours: number) =>
      layout(settings, to, "confirm_email_change", k("confirm_email_change", "subject"), [
        { text: k("confirm_email_change", "p1") },
        { button: { label: k("confirm_email_change", "button"), url } },
        { text: k("confirm_email_change", "p2", { hours: lifetimeHours }) },
      ]),
    // To the old address, at once: where and when it was asked, and the undo button (7 days).
    emailChangeRequested: (to: string, undoUrl: string, origin: NoticeOrigin) =>
      layout(settings, to, "email_change_requested", k("email_change_requested", "subject"), [
        { text: k("email_change_requested", "p1") },
        originParts(settings, origin),
        { text: k("email_change_requested", "p2") },
        { button: { label: k("email_change_requested", "button"), url: undoUrl } },
      ]),
    addressInUse: (to: string, signInUrl: string) =>
      layout(settings, to, "address_in_use", k("address_in_use", "subject"), [
        { text: k("address_in_use", "p1") },
        { text: k("address_in_use", "p2") },
        { button: { label: k("address_in_use", "button"), url: signInUrl } },
      ]),
    weeklyDigest: (to: string, figures: DigestFigures, checks: DigestCheck[]) => {
      const d = (key: string, values: Record<string, string | number> = {}) => k("weekly_digest", key, values);
      const from = utcMoment(figures.weekStartMs).slice(0, 10);
      const until = utcMoment(figures.weekStartMs + WEEK_MS - 1).slice(0, 10);
      const lines = (heading: string, items: string[]): Part => ({ text: [heading, ...items.map((item) => `• ${item}`)].join("\n") });
      const refusals = REFUSAL_REASONS.map((reason) => d("reason", { reason: d(`reason_${reason}`), count: figures.refusals[reason] }));
      const networks = figures.networks.map(({ network, count }) => d("network", { network, count }));
      const checkText = (check: DigestCheck) =>
        check.kind === "network"
          ? d("check_network", { network: check.network, count: check.count })
          : d(`check_${check.kind}`, { count: check.count });
      return layout(
        settings,
        to,
        "weekly_digest",
        d("subject", { from, until }),
        [
          { text: d("p1", { from, until }) },
          { text: d("attempts", { count: figures.attempts }) },
          lines(d("refusalsHeading"), refusals),
          {
            text: [
              d("locked", { count: figures.accountsLocked }),
              d("confirmations", { count: figures.newDeviceConfirmations }),
              d("takenOver", { count: figures.takenOver }),
            ].join("\n"),
          },
          { text: d("takenOverMeaning") },
          networks.length > 0 ? lines(d("networksHeading"), networks) : { text: d("networksNone") },
          checks.length > 0 ? lines(d("checkHeading"), checks.map(checkText)) : { text: d("check_nothing") },
        ],
        "mail.weekly_digest.why",
      );
    },
    // No reset button: there is no account left to reset; the address may register again.
    accountDeleted: (to: string, origin: NoticeOrigin, registerUrl: string) =>
      layout(settings, to, "account_deleted", k("account_deleted", "subject"), [
        { text: k("account_deleted", "p1") },
        originParts(settings, origin),
        { text: k("account_deleted", "p2") },
        { link: { label: k("account_deleted", "register"), url: registerUrl } },
      ]),
  };
}

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

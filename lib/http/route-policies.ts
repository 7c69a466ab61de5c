import type { PolicyName } from "@/lib/rate-limit/policies";

/**
 * What a limit is keyed by. `address` and `addressAndRoute` are known before the body is read;
 * `addressAndUsername` needs the parsed username, `user` the authenticated caller, `email` an
 * address the body names (keyed by its digest, whoever sends it).
 */
export type LimitKey = "address" | "addressAndRoute" | "addressAndUsername" | "user" | "session" | "email";
/**
 * `strangers`: a budget strangers share, which a known device of the account passes in its own lane instead.
 * `overflow`: once this budget is spent the request is not refused but answered mailbox first
 * (lib/auth/sign-in.ts), counted on the `overflow` policy under the same key, whose refusal is the answer.
 */
export type RouteLimit = { policy: PolicyName; key: LimitKey; strangers?: true; overflow?: PolicyName };

/**
 * The owner's lane past the limits strangers share (design invariant 11): a request with a
 * server-signed device cookie is counted on `policy`, per device, in place of the rows marked
 * `strangers`. `proof` says what makes it the owner's: the cookie's signature alone ("cookie":
 * the route names no account), or its signature for the account the body names ("account":
 * until the body is read the address rows wait, and a device of another account, or none, pays
 * them then).
 */
export type DeviceLane = { policy: PolicyName; proof: "cookie" | "account" };

/** How a refusal is answered: plain 429, 429 with RateLimit fields for API clients, or a quiet 204. */
export type RefusalStyle = "browser" | "api" | "drop";

/**
 * Who besides the app's own pages may send the route a state-changing request (POST, PUT, PATCH,
 * DELETE), with the reason; absent, the app's own pages only. `limited` applies this before the
 * route runs and before the body is read (lib/http/csrf.ts, the one CSRF rule), so no route can
 * forget it, and attack-shapes.csrf.ts sends every route file's handlers another site's request.
 * - `nonBrowser`: also a client that names neither its site nor its origin (curl, an app's HTTP
 *   library: every browser since 2020 sends one on a POST), with a JSON body, which no page of
 *   another site can make a browser send without a CORS preflight this app never grants.
 * - `cookieless`: any request that carries no cookie at all, from anywhere (the token API for
 *   apps: its authority is in the body or the Authorization header, nothing a browser adds on its
 *   own); a request with a cookie is held to the rule, as `nonBrowser` says for it.
 * - `bearer`: also a request whose Authorization header is a Bearer token, whatever cookie it
 *   carries and whatever site it names: no browser adds that header on its own (nor can another
 *   site's page without a CORS preflight this app never grants). Only on a route that then
 *   authenticates by that token alone (apiCaller, lib/auth/api-auth.ts: with an Authorization
 *   header the cookie is never read, and a bad token is a 401), so the cookie's authority is not
 *   borrowed.
 * - `anySite`: any request: the route reads no cookie and changes nothing of anyone's.
 */
export type Senders =
  | { nonBrowser: string; cookieless?: undefined; bearer?: undefined; anySite?: undefined }
  | { cookieless: string; nonBrowser?: string; bearer?: string; anySite?: undefined }
  | { anySite: string; nonBrowser?: undefined; cookieless?: undefined; bearer?: undefined };

/**
 * Every route handler under app/api, with the limits it applies, in the order they apply, or
 * `unlimited` with the reason. This table is what runs: `limited(path, handler)` applies the
 * rows (lib/auth/limited.ts), so no route names a policy. Matching is on the whole path
 * pattern, never on a prefix: a prefix rule once sent report downloads into the report-build
 * bucket. route-policies.test.ts fails for a route file missing here, and for a path two rules
 * claim; tests/integration/route-limits.test.ts proves through the handlers that each row holds.
 */
export type RouteRule = { path: string; file: string; senders?: Senders } & (
  { method: "GET" | "POST"; limits: readonly RouteLimit[]; refusal: RefusalStyle; deviceLane?: DeviceLane } | { unlimited: string }
);

const SIGN_IN: readonly RouteLimit[] = [
  { policy: "signInAddress", key: "address" },
  { policy: "signInUsername", key: "addressAndUsername" },
];

/**
 * The browser's sign-in: a known device of the account passes every row in its own lane. A new
 * browser at an address whose password checks for new devices are spent proves the mailbox before
 * its password is checked (docs/owner-lane.md), within that address's mailbox-first budget.
 */
const BROWSER_SIGN_IN: readonly RouteLimit[] = [
  { policy: "signInAddress", key: "address", strangers: true },
  { policy: "newDeviceChecks", key: "address", strangers: true, overflow: "mailboxFirst" },
  { policy: "signInUsername", key: "addressAndUsername", strangers: true },
];

/** "Email me a link" (a reset, a new confirmation or unlock link): one budget per client for all three. */
const LINK_REQUEST: readonly RouteLimit[] = [
  { policy: "passwordForgot", key: "address" },
  { policy: "passwordForgotUsername", key: "addressAndUsername" },
];

/** The emailed links' pages and "email me a link": scripts have always posted these as JSON. */
const LINK_SCRIPTS: Senders = { nonBrowser: "a script may press an emailed link or ask for one (JSON only), as before this rule" };

/** The token API for apps (decision 38): no cookie, no ambient authority, so no other site to fear. */
const APPS: Senders = {
  cookieless: "an app authenticates with the body's credentials or its Bearer token, never with anything a browser adds",
  nonBrowser: "an app that keeps the browser's device cookie names no origin either",
};

/**
 * The API's writes, by Bearer token or by the browser's session: the token from anywhere, with or
 * without a cookie beside it (the route reads the cookie only when no Authorization is sent); the
 * session from the app's own pages only.
 */
const API_WRITES: Senders = {
  cookieless: "a Bearer token's write that carries no cookie at all: no ambient authority for another site to borrow",
  bearer: "a Bearer token's write, whatever cookie the client keeps: apiCaller reads no cookie once Authorization is sent",
};

export const ROUTE_RULES: readonly RouteRule[] = [
  // next-auth: only the four actions the app uses exist; every other /api/auth path is a 404.
  {
    path: "/api/auth/callback/credentials",
    method: "POST",
    file: "app/api/auth/callback/credentials/route.ts",
    limits: BROWSER_SIGN_IN,
    refusal: "browser",
    deviceLane: { policy: "signInDevice", proof: "account" },
  },
  // The passkey: the owner's door. The sign-in's address limit and its own; no lockout, no hashing.
  {
    path: "/api/auth/passkey/options",
    method: "POST",
    file: "app/api/auth/passkey/options/route.ts",
    limits: [{ policy: "passkeyOptions", key: "address" }],
    refusal: "browser",
  },
  {
    path: "/api/auth/passkey",
    method: "POST",
    file: "app/api/auth/passkey/route.ts",
    limits: [
      { policy: "signInAddress", key: "address" },
      { policy: "passkeySignIn", key: "address" },
    ],
    refusal: "browser",
  },
  // The second step after a right password: per address before the body, then per account (and
  // per known device of it) once the pending sign-in names it; the code lock sits behind both.
  ...(["/api/auth/second-step", "/api/auth/second-step/passkey"] as const).map((path): RouteRule => ({
    path,
    method: "POST",
    file: `app${path}/route.ts`,
    limits: [
      { policy: "secondStep", key: "address" },
      { policy: "secondStepAccount", key: "user" },
    ],
    refusal: "browser",
  })),
  // "Resend code": mail is bounded behind this per asking address (deviceCodeResendAddress) and per
  // account and code (deviceCodeMail), in the background; no per-account limit here, which would
  // tell a right password's pending sign-in from a stand-in.
  {
    path: "/api/auth/second-step/resend",
    method: "POST",
    file: "app/api/auth/second-step/resend/route.ts",
    limits: [{ policy: "secondStep", key: "address" }],
    refusal: "browser",
  },
  {
    path: "/api/auth/second-step/passkey/options",
    method: "POST",
    file: "app/api/auth/second-step/passkey/options/route.ts",
    limits: [{ policy: "passkeyOptions", key: "address" }],
    refusal: "browser",
  },
  {
    path: "/api/auth/session",
    file: "app/api/auth/session/route.ts",
    unlimited: "decodes the session cookie and reads its one session record by primary key: no hashing",
  },
  {
    path: "/api/auth/signout",
    file: "app/api/auth/signout/route.ts",
    unlimited: "ends the caller's own session (record and cookie) behind the CSRF rule",
  },
  {
    path: "/api/auth/[...rest]",
    file: "app/api/auth/[...rest]/route.ts",
    senders: { anySite: "answers 404 to every method and changes nothing" },
    unlimited: "answers 404 for every next-auth action the app does not use",
  },
  {
    path: "/api/register",
    method: "POST",
    file: "app/api/register/route.ts",
    senders: { nonBrowser: "a script (the bench, a provisioning tool) may register by JSON, as before this rule" },
    limits: [{ policy: "register", key: "address" }],
    refusal: "browser",
  },
  // "Create an account with a passkey": a mailing endpoint, limited as registration and per address
  // asked for, then each account's recovery-mail quota.
  {
    path: "/api/register/passkey",
    method: "POST",
    file: "app/api/register/passkey/route.ts",
    senders: LINK_SCRIPTS,
    limits: [
      { policy: "register", key: "address" },
      { policy: "passwordForgotUsername", key: "addressAndUsername" },
    ],
    refusal: "browser",
  },
  {
    path: "/api/no-script/[form]",
    file: "app/api/no-script/[form]/route.ts",
    unlimited:
      "answers a redirect, where a form posted before JavaScript took over lands; reads no body but forgot-password's bounded form (its address, kept in a cookie for that page)",
  },
  {
    path: "/api/altcha/challenge",
    method: "GET",
    file: "app/api/altcha/challenge/route.ts",
    limits: [{ policy: "altchaChallenge", key: "address", strangers: true }],
    refusal: "browser",
    deviceLane: { policy: "altchaChallengeDevice", proof: "cookie" },
  },
  {
    path: "/api/csp-report",
    method: "POST",
    file: "app/api/csp-report/route.ts",
    senders: { anySite: "a browser's violation report, logged and counted: no cookie read, nothing of anyone's changed" },
    limits: [{ policy: "cspReport", key: "address" }],
    refusal: "drop",
  },
  {
    path: "/api/brand/logo/[hash]",
    file: "app/api/brand/logo/[hash]/route.ts",
    unlimited: "a few kB from memory, no lookup, cached by browsers for a year: cheaper than the limit check",
  },
  {
    path: "/api/locale",
    file: "app/api/locale/route.ts",
    unlimited: "sets the language cookie of the visitor's own browser: no lookup, no hashing, no state on the server",
  },
  {
    path: "/api/health",
    file: "app/api/health/route.ts",
    unlimited: "cheap, read-only, and polled by load balancers from a few fixed addresses",
  },
  {
    path: "/api/metrics",
    file: "app/api/metrics/route.ts",
    unlimited: "off unless METRICS_TOKEN is set; a wrong token costs one SHA-256 and a 401",
  },
  {
    path: "/api/health/ready",
    file: "app/api/health/ready/route.ts",
    unlimited: "cheap, read-only, and polled by load balancers from a few fixed addresses",
  },
  {
    path: "/api/v1/authentication/token",
    method: "POST",
    file: "app/api/v1/authentication/token/route.ts",
    senders: APPS,
    // The browser's budget of checks for new devices too (decision 38), as a plain limit: the API has
    // no page to prove the mailbox first, and must not be the way around the browser's 5.
    limits: [
      { policy: "apiToken", key: "addressAndRoute" },
      { policy: "signInAddress", key: "address" },
      { policy: "newDeviceChecks", key: "address" },
      { policy: "signInUsername", key: "addressAndUsername" },
    ],
    refusal: "api",
  },
  {
    path: "/api/v1/authentication/token/mfa",
    method: "POST",
    file: "app/api/v1/authentication/token/mfa/route.ts",
    senders: APPS,
    limits: [
      { policy: "apiToken", key: "addressAndRoute" },
      { policy: "secondStep", key: "address" },
      { policy: "secondStepAccount", key: "user" },
    ],
    refusal: "api",
  },
  {
    path: "/api/v1/authentication/token/confirm-device",
    method: "POST",
    file: "app/api/v1/authentication/token/confirm-device/route.ts",
    senders: APPS,
    // No per-account limit: it would tell a right password's pending sign-in from a stand-in (lib/auth/second-step.ts).
    limits: [
      { policy: "apiToken", key: "addressAndRoute" },
      { policy: "secondStep", key: "address" },
    ],
    refusal: "api",
  },
  {
    path: "/api/v1/authentication/token/refresh",
    method: "POST",
    file: "app/api/v1/authentication/token/refresh/route.ts",
    senders: APPS,
    limits: [{ policy: "apiToken", key: "addressAndRoute" }],
    refusal: "api",
  },
  { path: "/api/v1/me", method: "GET", file: "app/api/v1/me/route.ts", limits: [{ policy: "api", key: "user" }], refusal: "api" },
  {
    path: "/api/v1/reports",
    method: "POST",
    file: "app/api/v1/reports/route.ts",
    senders: API_WRITES,
    limits: [{ policy: "apiReports", key: "user" }],
    refusal: "api",
  },
  {
    path: "/api/v1/reports/[id]",
    method: "GET",
    file: "app/api/v1/reports/[id]/route.ts",
    limits: [{ policy: "apiReportDownload", key: "address" }],
    refusal: "api",
  },
  // Change password: the current password goes through the sign-in limits (then ALTCHA, lockout, hash budget).
  { path: "/api/account/password", method: "POST", file: "app/api/account/password/route.ts", limits: SIGN_IN, refusal: "browser" },
  // "Confirm it's you" with the password: the sign-in's limits, then ALTCHA, lockout, hash budget.
  {
    path: "/api/account/reauthenticate",
    method: "POST",
    file: "app/api/account/reauthenticate/route.ts",
    limits: SIGN_IN,
    refusal: "browser",
  },
  // The account page's forms: cheap writes, per user, behind a live session and a form token.
  {
    path: "/api/account/sessions/revoke",
    method: "POST",
    file: "app/api/account/sessions/revoke/route.ts",
    limits: [{ policy: "accountChanges", key: "user" }],
    refusal: "api",
  },
  {
    path: "/api/account/sessions/revoke-others",
    method: "POST",
    file: "app/api/account/sessions/revoke-others/route.ts",
    limits: [{ policy: "accountChanges", key: "user" }],
    refusal: "api",
  },
  // Forget a known device: per user, behind a live session, a form token and a fresh authentication.
  {
    path: "/api/account/devices/forget",
    method: "POST",
    file: "app/api/account/devices/forget/route.ts",
    limits: [{ policy: "accountChanges", key: "user" }],
    refusal: "api",
  },
  // "Don't ask again" on the invitation to add a passkey: per user, behind a live session and a form token.
  {
    path: "/api/account/passkey-invite/dismiss",
    method: "POST",
    file: "app/api/account/passkey-invite/dismiss/route.ts",
    limits: [{ policy: "accountChanges", key: "user" }],
    refusal: "api",
  },
  // "Delete account": per user, behind a live session, a form token, the typed address and a fresh authentication.
  {
    path: "/api/account/delete",
    method: "POST",
    file: "app/api/account/delete/route.ts",
    limits: [{ policy: "accountChanges", key: "user" }],
    refusal: "api",
  },
  // "Change email": per account and per new address, spent only once a fresh authentication let the request through.
  {
    path: "/api/account/email",
    method: "POST",
    file: "app/api/account/email/route.ts",
    limits: [
      { policy: "emailChange", key: "user" },
      { policy: "emailChangeAddress", key: "email" },
    ],
    refusal: "api",
  },
  // The links of a change of address, and "This wasn't me": as every emailed link, per client address.
  ...(["/api/email-change/confirm", "/api/email-change/undo", "/api/not-me"] as const).map((path): RouteRule => ({
    path,
    method: "POST",
    file: `app${path}/route.ts`,
    senders: LINK_SCRIPTS,
    limits: [{ policy: "emailLinks", key: "address" }],
    refusal: "browser",
  })),
  // "Download my data": a quota per account, spent only once a fresh authentication let the request through.
  {
    path: "/api/account/data",
    method: "POST",
    file: "app/api/account/data/route.ts",
    limits: [{ policy: "accountExport", key: "user" }],
    refusal: "api",
  },
  // Passkeys and second steps on the account page: per browser session (one session, an intruder's, cannot spend
  // the owner's allowance), behind a live session and a form token; adding, renaming and removing
  // also need a fresh authentication.
  ...(
    [
      "/api/account/passkeys/options",
      "/api/account/passkeys",
      "/api/account/passkeys/rename",
      "/api/account/passkeys/remove",
      "/api/account/reauthenticate/passkey",
      "/api/account/passkeys/second-factor",
      "/api/account/totp/setup",
      "/api/account/totp/confirm",
      "/api/account/totp/remove",
      "/api/account/recovery-codes",
      // "Set a password" (no current one to check): a fresh authentication, then one Argon2id in a budget slot.
      "/api/account/password/set",
    ] as const
  ).map((path): RouteRule => ({
    path,
    method: "POST",
    file: `app${path}/route.ts`,
    limits: [{ policy: "accountChanges", key: "session" }],
    refusal: "api",
  })),
  // Recovery by email: each answers alike for every address; the emailed links' tokens are the only keys.
  {
    path: "/api/password/forgot",
    method: "POST",
    file: "app/api/password/forgot/route.ts",
    senders: LINK_SCRIPTS,
    limits: LINK_REQUEST,
    refusal: "browser",
  },
  {
    path: "/api/email/verification",
    method: "POST",
    file: "app/api/email/verification/route.ts",
    senders: LINK_SCRIPTS,
    limits: LINK_REQUEST,
    refusal: "browser",
  },
  {
    path: "/api/unlock/request",
    method: "POST",
    file: "app/api/unlock/request/route.ts",
    senders: LINK_SCRIPTS,
    limits: LINK_REQUEST,
    refusal: "browser",
  },
  {
    path: "/api/password/reset",
    method: "POST",
    file: "app/api/password/reset/route.ts",
    senders: LINK_SCRIPTS,
    limits: [{ policy: "emailLinks", key: "address" }],
    refusal: "browser",
  },
  {
    path: "/api/email/verify",
    method: "POST",
    file: "app/api/email/verify/route.ts",
    // Confirming signs the owner in: the password goes through the sign-in's limits too.
    limits: [
      { policy: "emailLinks", key: "address" },
      { policy: "signInAddress", key: "address" },
      { policy: "signInUsername", key: "addressAndUsername" },
    ],
    refusal: "browser",
  },
  // The new_passkey link's ceremony: its options, then the answer that makes the passkey and signs in.
  {
    path: "/api/new-passkey/options",
    method: "POST",
    file: "app/api/new-passkey/options/route.ts",
    senders: LINK_SCRIPTS,
    limits: [{ policy: "emailLinks", key: "address" }],
    refusal: "browser",
  },
  {
    path: "/api/new-passkey",
    method: "POST",
    file: "app/api/new-passkey/route.ts",
    limits: [
      { policy: "emailLinks", key: "address" },
      { policy: "signInAddress", key: "address" },
    ],
    refusal: "browser",
  },
  {
    path: "/api/password/reset/preview",
    method: "POST",
    file: "app/api/password/reset/preview/route.ts",
    senders: LINK_SCRIPTS,
    limits: [{ policy: "emailLinks", key: "address" }],
    refusal: "browser",
  },
  {
    path: "/api/email/verify/preview",
    method: "POST",
    file: "app/api/email/verify/preview/route.ts",
    senders: LINK_SCRIPTS,
    limits: [{ policy: "emailLinks", key: "address" }],
    refusal: "browser",
  },
  {
    path: "/api/unlock/preview",
    method: "POST",
    file: "app/api/unlock/preview/route.ts",
    senders: LINK_SCRIPTS,
    limits: [{ policy: "emailLinks", key: "address" }],
    refusal: "browser",
  },
  {
    path: "/api/unlock",
    method: "POST",
    file: "app/api/unlock/route.ts",
    senders: LINK_SCRIPTS,
    limits: [{ policy: "emailLinks", key: "address" }],
    refusal: "browser",
  },
  {
    path: "/api/v1/download-tokens",
    method: "POST",
    file: "app/api/v1/download-tokens/route.ts",
    senders: API_WRITES,
    limits: [{ policy: "apiDownloadTokens", key: "user" }],
    refusal: "api",
  },
];

export type RoutePath = (typeof ROUTE_RULES)[number]["path"];

/** The rule for a route pattern; throws for an unclassified one, so such a route cannot build. */
export function ruleAt(path: string): RouteRule {
  const rule = ROUTE_RULES.find((candidate) => candidate.path === path);
  if (!rule) throw new Error(`Route ${path} is not in ROUTE_RULES`);
  return rule;
}

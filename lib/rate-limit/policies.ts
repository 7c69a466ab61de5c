import type { AlgorithmPolicy, Bandwidth } from "@/lib/rate-limit/algorithms";

/**
 * Every limit Gatehouse applies, by name. A route asks for `signInUsername`; the 5-per-15-minutes
 * rule lives here, not in the handler.
 */

/** What to do when the store cannot answer: "closed" refuses the request, "open" lets it through. */
export type FailMode = "closed" | "open";

export type Policy = {
  /** Also scopes store keys, so two policies may limit the same key (e.g. an address) independently. */
  name: string;
  algorithm: AlgorithmPolicy;
  failMode: FailMode;
  description: string;
  /**
   * A budget that many owners share counts only what an attacker produces (design invariant 11):
   * the route gives a request back once it ends in a success (RouteLimits.succeeded).
   */
  countsFailuresOnly?: boolean;
  /**
   * Keep an idle key at least this long (renewed on every access, so expire-after-access, never
   * after write). Longer than the state needs changes no decision; it only bounds memory less.
   */
  idleTtlMs?: number;
};

export type PolicyName =
  | "signInUsername"
  | "signInAddress"
  | "signInDevice"
  | "newDeviceChecks"
  | "mailboxFirst"
  | "successRefunds"
  | "refusalRefunds"
  | "register"
  | "altchaChallenge"
  | "altchaChallengeDevice"
  | "apiToken"
  | "apiReports"
  | "apiReportDownload"
  | "apiDownloadTokens"
  | "api"
  | "accountChanges"
  | "cspReport"
  | "crossSiteRefusals"
  | "knownDeviceLane"
  | "passwordForgot"
  | "passwordForgotUsername"
  | "emailLinks"
  | "recoveryMail"
  | "securityNotice"
  | "newDeviceNotices"
  | "passkeyOptions"
  | "passkeySignIn"
  | "secondStep"
  | "secondStepAccount"
  | "deviceCodeMail"
  | "deviceCodeWindow"
  | "deviceCodeFresh"
  | "deviceCodeResend"
  | "deviceCodeResendAddress"
  | "deviceCodeGuesses"
  | "accountExport"
  | "emailChange"
  | "emailChangeAddress";

export type Policies = Readonly<Record<PolicyName, Policy>>;

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
type Unit = keyof typeof UNIT_MS;

const BANDWIDTH_PATTERN = /^(\d+)\s*\/\s*(\d+)\s*(ms|s|m|h|d)$/;
const SPEC_HELP = 'expected <count>/<amount><unit>[,...] with unit ms, s, m, h or d, e.g. "5/15m,2/10s"';

/** Parses a readable limit such as `5/15m,2/10s` (5 per 15 minutes and 2 per 10 seconds) into bandwidths. */
export function parseLimitSpec(spec: string): Bandwidth[] {
  if (spec.trim() === "") throw new Error(`Invalid rate limit spec "${spec}": it is empty; ${SPEC_HELP}`);
  return spec.split(",").map((rawPart) => {
    const part = rawPart.trim();
    const match = BANDWIDTH_PATTERN.exec(part);
    if (!match) throw new Error(`Invalid rate limit spec "${spec}": "${part}" is not understood; ${SPEC_HELP}`);
    const capacity = Number(match[1]);
    const amount = Number(match[2]);
    const periodMs = amount * UNIT_MS[match[3] as Unit];
    if (!Number.isSafeInteger(capacity) || capacity <= 0) {
      throw new Error(`Invalid rate limit spec "${spec}": the count in "${part}" must be a whole number > 0`);
    }
    if (!Number.isSafeInteger(periodMs) || periodMs <= 0) {
      throw new Error(`Invalid rate limit spec "${spec}": the period in "${part}" must be a whole number > 0`);
    }
    return { capacity, periodMs };
  });
}

/** The inverse of `parseLimitSpec`, using the largest unit that divides each period (for logs and docs). */
export function formatLimitSpec(bandwidths: readonly Bandwidth[]): string {
  const unitsLargestFirst = (Object.entries(UNIT_MS) as [Unit, number][]).sort((a, b) => b[1] - a[1]);
  return bandwidths
    .map(({ capacity, periodMs }) => {
      const [unit, unitMs] = unitsLargestFirst.find(([, ms]) => periodMs % ms === 0) ?? ["ms", 1];
      return `${capacity}/${periodMs / unitMs}${unit}`;
    })
    .join(",");
}

type Described = { failMode: FailMode; description: string; countsFailuresOnly?: boolean };

function tokenBucketPolicy(name: PolicyName, spec: string, described: Described): Policy {
  const bandwidths = parseLimitSpec(spec).map((bandwidth) => Object.freeze(bandwidth));
  return Object.freeze({
    name,
    algorithm: Object.freeze({ kind: "token-bucket" as const, bandwidths: Object.freeze(bandwidths) }),
    ...described,
  });
}

/** A sliding window from a one-bandwidth spec (`10/1m`: 10 per minute), kept 10 windows after its last use. */
function slidingWindowPolicy(name: PolicyName, spec: string, described: Described): Policy {
  const bandwidths = parseLimitSpec(spec);
  if (bandwidths.length !== 1) throw new Error(`Invalid rate limit spec "${spec}": a sliding window takes one count/period`);
  const [{ capacity, periodMs }] = bandwidths as [Bandwidth];
  return Object.freeze({
    name,
    algorithm: Object.freeze({ kind: "sliding-window" as const, limit: capacity, windowMs: periodMs }),
    ...described,
    idleTtlMs: 10 * periodMs,
  });
}

/**
 * `policy` with every count multiplied by `factor` over the same periods (so it also refills
 * `factor` times faster): the allowance of an address in TRUSTED_NETWORKS.
 */
export function scaledPolicy(policy: Policy, factor: number): Policy {
  const { algorithm } = policy;
  const scaled: AlgorithmPolicy =
    algorithm.kind === "token-bucket"
      ? { kind: "token-bucket", bandwidths: algorithm.bandwidths.map((b) => ({ capacity: b.capacity * factor, periodMs: b.periodMs })) }
      : { ...algorithm, limit: algorithm.limit * factor };
  return Object.freeze({ ...policy, algorithm: scaled });
}

const DESCRIPTIONS: Record<PolicyName, Described & { algorithm?: "sliding-window" }> = {
  signInUsername: {
    failMode: "closed",
    countsFailuresOnly: true,
    description:
      "Failed sign-in attempts per normalised username and client address: slows guessing one account's password. " +
      "A success gives its attempt back; a known device of the account has its own lane (signInDevice). " +
      "Fails closed: a store outage must not reopen unlimited guessing.",
  },
  signInAddress: {
    failMode: "closed",
    countsFailuresOnly: true,
    description:
      "Failed sign-in attempts per client address across all usernames: blunts password spraying, where one " +
      "address tries a common password against many accounts. Counted before the body and given back by a " +
      "success (or by the per-username limit's refusal, which counted it on its own key), so an office of owners " +
      "behind one address never spends it; wrong passwords and malformed or body-less requests do. A known " +
      "device of the account has its own lane (signInDevice). Fails closed.",
  },
  newDeviceChecks: {
    failMode: "closed",
    countsFailuresOnly: true,
    description:
      "Failed password checks per client address for browsers with no known device of the account (the browser " +
      "sign-in only). Once spent, such a sign-in is not refused: it proves the mailbox first (a code mailed to the " +
      "account, if there is one) and its password is checked after, in the owner's lane, so a guest spraying from an " +
      "office address reaches Argon2id this many times while the office's first-day staff still get in. A success " +
      "gives its check back. Fails closed.",
  },
  mailboxFirst: {
    failMode: "closed",
    description:
      "Sign-ins per client address answered mailbox first (newDeviceChecks spent): each stores a pending sign-in " +
      "and may mail a code, so a flood of them is refused (429) past this. A right code gives its sign-in back, so " +
      "only strangers who never read the owner's mail spend it. Fails closed.",
  },
  successRefunds: {
    failMode: "closed",
    description:
      "Refunds per account of the budgets that count failures only (a right password, a passkey, a passed second " +
      "step gives its attempt back): a person signs in a few times a quarter hour, so one account's right password " +
      "sent in a loop is not free Argon2id for its address. Fails closed: no refund.",
  },
  refusalRefunds: {
    failMode: "closed",
    description:
      "Refunds per client address of its sign-in budget for attempts the per-username limit refused (counted on " +
      "that key already), so one guest guessing one account does not spend an office's budget; past it they spend " +
      "the address, whose refusal the fast path then answers cheaply. Fails closed: no refund.",
  },
  signInDevice: {
    failMode: "closed",
    description:
      "Sign-in attempts per known device (a live device cookie), in place of the address limits that strangers " +
      "share: the owner's lane past an office's busy address. A success replaces the device, so only its failures " +
      "add up; its own lock (the device lockout) bounds its password checks. Fails closed.",
  },
  register: {
    failMode: "closed",
    description:
      "Registrations per client address, refilled gradually (one token at a time, not all at the top of the hour) " +
      "so a full burst cannot be repeated every period. Fails closed.",
  },
  altchaChallenge: {
    failMode: "open",
    description:
      "ALTCHA challenge requests per client address: protects server capacity only, since each solution is " +
      "verified and spent later; sized for an office of 200 signing in within a few minutes. Fails open so a " +
      "store outage does not block every sign-in.",
  },
  altchaChallengeDevice: {
    failMode: "open",
    description:
      "ALTCHA challenge requests per known device (a server-signed device cookie), in place of the address's: " +
      "strangers at the owner's address cannot spend it. Fails open, as the address's does.",
  },
  apiToken: {
    failMode: "closed",
    algorithm: "sliding-window",
    description:
      "Token and refresh requests per client address and path (sliding window), in front of the sign-in " +
      "pipeline: the unauthenticated surface of the API. Idle counters are kept 10 windows. Fails closed.",
  },
  apiReports: {
    failMode: "closed",
    description: "Report builds per user: the expensive endpoint gets its own tight bucket. Fails closed (it costs real work).",
  },
  apiReportDownload: {
    failMode: "open",
    description:
      "Report downloads per client address: its own bucket, never the expensive one (a shared prefix once " +
      "sent downloads into the report-build quota). Fails open: it protects capacity.",
  },
  apiDownloadTokens: {
    failMode: "closed",
    description: "Download tokens per user id (a quota keyed by identity, not address). Fails closed: a quota.",
  },
  api: {
    failMode: "open",
    description: "Every other authenticated API call, per user: generous, against runaway clients. Fails open.",
  },
  accountChanges: {
    failMode: "closed",
    description:
      "Changes from the account page: revoking sessions, forgetting known devices and deleting the account per user; passkeys, the second step and confirming with a " +
      "passkey per browser session. A person makes a few a minute. Fails closed: each one writes and records a security event.",
  },
  cspReport: {
    failMode: "open",
    description:
      "Content-Security-Policy reports per client address, in a bucket of their own: browsers send them on " +
      "their own, so they must never spend a user's sign-in or API quota. Fails open.",
  },
  crossSiteRefusals: {
    failMode: "open",
    description:
      "Requests per client address that the CSRF rule refused (another site's post, or one that names no origin " +
      "where the route wants the app's own pages), counted only on refusal and before any other limit, so another " +
      "site's page open in an office's browsers spends none of that address's budgets. Past it the refusal is a " +
      "429 that the fast path answers for such requests only, never for the address's own pages. Fails open: the " +
      "request is refused all the same.",
  },
  knownDeviceLane: {
    failMode: "closed",
    description:
      "Sign-ins per normalised username that may use the owner's lane (a known device): an owner signs in a few " +
      "times an hour, so anyone who registers accounts to get devices of their own cannot fill the trusted slots. " +
      "Past it, or with the store down (fails closed), the attempt is an untrusted client's, not refused.",
  },
  passwordForgot: {
    failMode: "closed",
    description:
      "Requests for an emailed link (password reset, a new confirmation or unlock link) per client address (each " +
      "may send an email). Fails closed: a store outage must not turn the forms into a mail cannon.",
  },
  passwordForgotUsername: {
    failMode: "closed",
    description:
      "Requests for an emailed link per normalised address and client address, the same for every address whether " +
      "it has an account or not. Fails closed.",
  },
  emailLinks: {
    failMode: "closed",
    description:
      "Uses of emailed links (verify, reset, unlock) per client address: a 256-bit token cannot be guessed, so this " +
      "only bounds the work (a reset hashes a password). Fails closed.",
  },
  recoveryMail: {
    failMode: "open",
    description:
      "Recovery emails (verification, reset, address-taken, an unlock link asked for) per account and kind. Past " +
      "it the request still answers alike, and no email is sent: the newest link already in the owner's mailbox " +
      "still works. Fails open: the route limits in front of it fail closed.",
  },
  securityNotice: {
    failMode: "open",
    description:
      "Security notices (new device, password changed or reset, session copied, lockout) per account and kind: " +
      "one alert, not one per attempt; a new device's sign-in per account and device, so each new device gets its own " +
      "notice (newDeviceNotices caps them). Fails open: the sign-in limits bound them already.",
  },
  newDeviceNotices: {
    failMode: "open",
    description:
      '"New sign-in to your account" mails per account, whatever the device: each new device\'s sign-in is mailed with ' +
      'its own "This wasn\'t me" up to this cap, and past it the sign-in is only listed on the account page (its ' +
      "sessions and known devices), so a flood of new devices cannot fill the owner's mailbox (decision 0041). Fails " +
      "open: the sign-in limits bound them already.",
  },
  passkeyOptions: {
    failMode: "open",
    description:
      "WebAuthn challenges per client address: each costs one HMAC and nothing is stored until it is used. " +
      "Fails open: it only protects capacity, and the sign-in it leads to is limited again.",
  },
  passkeySignIn: {
    failMode: "closed",
    countsFailuresOnly: true,
    description:
      "Passkey sign-ins per client address, beside the sign-in address limit: a signature check costs little, but " +
      "each failed try is counted (a success gives its try back). No lockout applies (a stranger cannot sign for " +
      "the owner's passkey). Fails closed.",
  },
  secondStep: {
    failMode: "closed",
    countsFailuresOnly: true,
    description:
      "Wrong second-step answers (authenticator-app codes, recovery codes, mailed device codes, passkeys after a " +
      "password) per client address: a passed step gives its answer back, so an office's staff never spend it. " +
      "Each pending sign-in takes 5 tries and each account has its own code lock behind this. Fails closed.",
  },
  secondStepAccount: {
    failMode: "closed",
    description:
      "Second-step answers per account, and per known device of it: whoever holds the password cannot spend the " +
      "owner's allowance on the owner's own devices. Fails closed.",
  },
  deviceCodeMail: {
    failMode: "open",
    description:
      '"Resend code" mails per account and code (its window and seed), whoever asks: the ceiling that keeps a crowd ' +
      "of addresses from flooding the mailbox. A code lives 10 minutes, so the hourly spec is its resends; past it " +
      "nothing is sent and the answer is the same, and the mailbox already holds that code from the resends that " +
      "spent it; the next code has resends of its own. Must allow more than deviceCodeResendAddress within those 10 " +
      "minutes, at least 2 (the server refuses to start otherwise). Fails open: a resend only repeats a code the window already mailed.",
  },
  deviceCodeWindow: {
    failMode: "open",
    description:
      "Device-code mails per account, code window (10 minutes) and code seed: every pending sign-in of one " +
      "window waits for the same code until one is finished with it, so the first mail is the one that matters " +
      "and a guest asking again mails the owner nothing more. Not counted on the resend quota, so nobody can " +
      "spend the owner's codes. Fails open.",
  },
  deviceCodeFresh: {
    failMode: "open",
    description:
      "Fresh device codes mailed per account (the first of each window and seed, beside deviceCodeWindow): " +
      "however often codes are spent, the owner's mailbox gets a bounded number of new ones. Fails open.",
  },
  deviceCodeResend: {
    failMode: "closed",
    description:
      '"Resend code" mails per pending sign-in, beneath deviceCodeResendAddress and the account\'s deviceCodeMail: ' +
      "one stranger's pending sign-in cannot spend the owner's resends. Past it the answer is the same and nothing is " +
      "sent. Fails closed: the code already mailed still works.",
  },
  deviceCodeResendAddress: {
    failMode: "closed",
    description:
      '"Resend code" mails per account and asking address, before the account\'s deviceCodeMail (and given back ' +
      "when that refuses): a stranger's resends, from however many pending sign-ins, spend their own address's " +
      "budget, never the owner's elsewhere. It must stay below deviceCodeMail within a code's 10 minutes (the " +
      "server refuses to start otherwise), so one address cannot spend a code's resends. Past it the answer is the same and " +
      "nothing is sent. Fails closed: the code already mailed still works.",
  },
  deviceCodeGuesses: {
    failMode: "open",
    countsFailuresOnly: true,
    description:
      "Wrong mailed device codes per account, code, window and address, taken before the compare and given " +
      "back for a right code: past it that address's answers are a wrong code's without a compare, and the " +
      "code still works from any other address (the owner's). A stand-in is counted alike. Fails open: each " +
      "pending sign-in's 5 tries and the secondStep budget remain.",
  },
  accountExport: {
    failMode: "closed",
    description:
      '"Download my data" per account, counted once a fresh authentication let it through: the export reads every ' +
      "table about the account. Fails closed: a quota.",
  },
  emailChange: {
    failMode: "closed",
    description:
      '"Change email" per account, counted once a fresh authentication let it through: each request mails the new ' +
      "address and the old one. Fails closed: a mail quota.",
  },
  emailChangeAddress: {
    failMode: "closed",
    description:
      '"Change email" per new address (its digest), whichever account asks: no crowd of accounts can flood one ' +
      'mailbox with confirmation links or its owner with "someone tried to use your address". Fails closed: a mail quota.',
  },
};

export const defaultLimitSpecs: Readonly<Record<PolicyName, string>> = Object.freeze({
  signInUsername: "5/15m",
  signInAddress: "30/15m",
  signInDevice: "20/15m",
  newDeviceChecks: "5/15m",
  mailboxFirst: "200/15m",
  successRefunds: "5/15m",
  refusalRefunds: "60/15m",
  register: "20/1h",
  altchaChallenge: "120/1m,30/10s",
  altchaChallengeDevice: "30/1m,10/10s",
  apiToken: "10/1m",
  apiReports: "6/10s",
  apiReportDownload: "30/1m",
  apiDownloadTokens: "5/1h",
  api: "120/1m,20/1s",
  accountChanges: "10/1m",
  cspReport: "60/1m",
  crossSiteRefusals: "20/1m",
  knownDeviceLane: "10/1h",
  passwordForgot: "20/1h",
  passwordForgotUsername: "3/1h",
  emailLinks: "20/15m",
  recoveryMail: "3/1h",
  securityNotice: "1/15m,4/1d",
  newDeviceNotices: "6/1h,12/1d",
  passkeyOptions: "120/1m,30/10s",
  passkeySignIn: "20/15m",
  secondStep: "30/15m",
  secondStepAccount: "10/15m",
  deviceCodeMail: "3/1h",
  deviceCodeWindow: "1/10m",
  deviceCodeFresh: "12/1h",
  deviceCodeResend: "2/10m",
  deviceCodeResendAddress: "2/1h",
  deviceCodeGuesses: "10/10m",
  accountExport: "1/5m",
  emailChange: "3/1h",
  emailChangeAddress: "3/1d",
});

/** Environment variable that overrides each policy's limit spec. */
export const policyEnvVars = Object.freeze({
  signInUsername: "RATE_LIMIT_SIGN_IN_USERNAME",
  signInAddress: "RATE_LIMIT_SIGN_IN_ADDRESS",
  signInDevice: "RATE_LIMIT_SIGN_IN_DEVICE",
  newDeviceChecks: "RATE_LIMIT_NEW_DEVICE_CHECKS",
  mailboxFirst: "RATE_LIMIT_MAILBOX_FIRST",
  successRefunds: "RATE_LIMIT_SUCCESS_REFUNDS",
  refusalRefunds: "RATE_LIMIT_REFUSAL_REFUNDS",
  register: "RATE_LIMIT_REGISTER",
  altchaChallenge: "RATE_LIMIT_ALTCHA_CHALLENGE",
  altchaChallengeDevice: "RATE_LIMIT_ALTCHA_CHALLENGE_DEVICE",
  apiToken: "RATE_LIMIT_API_TOKEN",
  apiReports: "RATE_LIMIT_API_REPORTS",
  apiReportDownload: "RATE_LIMIT_API_REPORT_DOWNLOAD",
  apiDownloadTokens: "RATE_LIMIT_API_DOWNLOAD_TOKENS",
  api: "RATE_LIMIT_API",
  accountChanges: "RATE_LIMIT_ACCOUNT_CHANGES",
  cspReport: "RATE_LIMIT_CSP_REPORT",
  crossSiteRefusals: "RATE_LIMIT_CROSS_SITE_REFUSALS",
  knownDeviceLane: "RATE_LIMIT_KNOWN_DEVICE_LANE",
  passwordForgot: "RATE_LIMIT_PASSWORD_FORGOT",
  passwordForgotUsername: "RATE_LIMIT_PASSWORD_FORGOT_USERNAME",
  emailLinks: "RATE_LIMIT_EMAIL_LINKS",
  recoveryMail: "RATE_LIMIT_RECOVERY_MAIL",
  securityNotice: "RATE_LIMIT_SECURITY_NOTICE",
  newDeviceNotices: "RATE_LIMIT_NEW_DEVICE_NOTICES",
  passkeyOptions: "RATE_LIMIT_PASSKEY_OPTIONS",
  passkeySignIn: "RATE_LIMIT_PASSKEY_SIGN_IN",
  secondStep: "RATE_LIMIT_SECOND_STEP",
  secondStepAccount: "RATE_LIMIT_SECOND_STEP_ACCOUNT",
  deviceCodeMail: "RATE_LIMIT_DEVICE_CODE_MAIL",
  deviceCodeWindow: "RATE_LIMIT_DEVICE_CODE_WINDOW",
  deviceCodeFresh: "RATE_LIMIT_DEVICE_CODE_FRESH",
  deviceCodeResend: "RATE_LIMIT_DEVICE_CODE_RESEND",
  deviceCodeResendAddress: "RATE_LIMIT_DEVICE_CODE_RESEND_ADDRESS",
  deviceCodeGuesses: "RATE_LIMIT_DEVICE_CODE_GUESSES",
  accountExport: "RATE_LIMIT_ACCOUNT_EXPORT",
  emailChange: "RATE_LIMIT_EMAIL_CHANGE",
  emailChangeAddress: "RATE_LIMIT_EMAIL_CHANGE_ADDRESS",
} as const) satisfies Readonly<Record<PolicyName, string>>;

export const POLICY_NAMES = Object.keys(defaultLimitSpecs) as PolicyName[];

function buildPolicies(specs: Record<PolicyName, string>): Policies {
  const entries = POLICY_NAMES.map((name) => {
    const { algorithm, ...described } = DESCRIPTIONS[name];
    const build = algorithm === "sliding-window" ? slidingWindowPolicy : tokenBucketPolicy;
    return [name, build(name, specs[name], described)] as const;
  });
  return Object.freeze(Object.fromEntries(entries) as Record<PolicyName, Policy>);
}

export const defaultPolicies: Policies = buildPolicies(defaultLimitSpecs);

/** Why `spec` cannot be `name`'s limit, or null when it can (lib/config/env.ts reports it under the variable's name). */
export function checkLimitSpec(name: PolicyName, spec: string): string | null {
  try {
    if (DESCRIPTIONS[name].algorithm === "sliding-window") slidingWindowPolicy(name, spec, DESCRIPTIONS[name]);
    else parseLimitSpec(spec);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * A device code's life: its mail ceiling (deviceCodeMail) is one bucket per code, so one address's
 * resends are compared with it over this long. Passed on here for config/, which checks the two at
 * start: it already reads the limits from this file, and importing factors/ itself would be a new
 * upward import (tests/layers.test.ts).
 */
export { DEVICE_CODE_WINDOW_MS } from "@/lib/factors/device-confirmation";

/**
 * Whether one sender limited by `sender` can, at some moment within `horizonMs` (a device code's
 * window: its ceiling's bucket is per code), have sent every request `ceiling` allows by then, both
 * starting full (an address's resends against a code's mails). Compared by whole requests in the
 * buckets' continuous refill rather than by counts over one window: a bigger burst over a longer
 * window (5/2h) spends a code's 3/1h at once though it allows fewer in 2 h.
 * The k-th request can go at max(0, periodMs × (k − capacity) / capacity) over the bandwidths; the
 * ceiling is spent if the sender's k-th goes before the ceiling's (k+1)-th. That gap is piecewise
 * linear in k, so the whole k beside each bend, k = 1 and the last k within the horizon decide it exactly.
 */
export function canSpendAll(sender: readonly Bandwidth[], ceiling: readonly Bandwidth[], horizonMs: number): boolean {
  const senderPieces = bandwidthPieces(sender, 0n);
  const ceilingPieces = bandwidthPieces(ceiling, 1n);
  // The sender's last request within the horizon: k ≤ capacity × (periodMs + horizonMs) / periodMs for each bandwidth.
  const lastK = sender
    .map(({ capacity, periodMs }) => (BigInt(capacity) * (BigInt(periodMs) + BigInt(horizonMs))) / BigInt(periodMs))
    .reduce((least, k) => (k < least ? k : least));
  const candidates = new Set<bigint>([1n, lastK]);
  for (const pieces of [senderPieces, ceilingPieces]) {
    for (const [i, a] of pieces.entries()) {
      for (const b of pieces.slice(i + 1)) {
        // Where the two lines meet: k = num / den.
        const num = a.den * b.offset - b.den * a.offset;
        const den = a.slopeNum * b.den - b.slopeNum * a.den;
        if (den === 0n) continue;
        const [n, d] = den < 0n ? [-num, -den] : [num, den];
        if (n < 0n) continue;
        for (const k of [n / d, n / d + 1n]) if (k >= 1n) candidates.add(k);
      }
    }
  }
  const gapIsPositive = (k: bigint) => compareTimes(latestTime(ceilingPieces, k), latestTime(senderPieces, k)) > 0;
  return [...candidates].some((k) => k >= 1n && k <= lastK && gapIsPositive(k));
}

/** The time of request k + shift as lines in k: (slopeNum·k + offset) / den ms, with the zero line first. */
type Piece = { slopeNum: bigint; offset: bigint; den: bigint };

function bandwidthPieces(bandwidths: readonly Bandwidth[], shift: bigint): Piece[] {
  const zero: Piece = { slopeNum: 0n, offset: 0n, den: 1n };
  return [
    zero,
    ...bandwidths.map(({ capacity, periodMs }) => {
      const period = BigInt(periodMs);
      const count = BigInt(capacity);
      return { slopeNum: period, offset: period * (shift - count), den: count };
    }),
  ];
}

type Fraction = { num: bigint; den: bigint };

const compareTimes = (a: Fraction, b: Fraction): number => {
  const difference = a.num * b.den - b.num * a.den;
  return difference > 0n ? 1 : difference < 0n ? -1 : 0;
};

const latestTime = (pieces: Piece[], k: bigint): Fraction =>
  pieces
    .map((piece) => ({ num: piece.slopeNum * k + piece.offset, den: piece.den }))
    .reduce((latest, time) => (compareTimes(time, latest) > 0 ? time : latest));

/** The policies table with some specs replaced (each checked by `checkLimitSpec` first); an undefined spec keeps the default. */
export function policiesFromSpecs(overrides: Partial<Record<PolicyName, string | undefined>>): Policies {
  const specs = { ...defaultLimitSpecs };
  for (const name of POLICY_NAMES) specs[name] = overrides[name] ?? specs[name];
  return buildPolicies(specs);
}

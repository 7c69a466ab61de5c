import { z } from "zod";
import type { SecondStepMethod } from "@/lib/factors/store";
import type { SignInOutcome } from "@/lib/auth/sign-in-outcome";
import type { Gatehouse } from "@/lib/app";
import { completeSignIn, NOBODY, noticeOrigin, openPending, type PassedPassword } from "@/lib/auth/complete-sign-in";
import { countWrongCode } from "@/lib/auth/sign-in";
import type { RouteLimits } from "@/lib/auth/limited";
import { clearPendingSignInCookie, setDeviceCookie, setPendingSignInCookie } from "@/lib/http/cookies";
import { writeGuarded } from "@/lib/db/one-statement";
import { truncateAddress } from "@/lib/events/security-events";
import { credentialsUnchanged } from "@/lib/users/accounts";
import { secondFactorLocked } from "@/lib/http/refusals";
import { json, jsonError } from "@/lib/http/responses";
import { logSecurity } from "@/lib/auth/security-log";
import { fieldErrors } from "@/lib/auth/credentials";
import { passkeyRefused, spendAssertion } from "@/lib/auth/passkey-sign-in";
import type { ParsedAuthentication } from "@/lib/passkeys/webauthn";
import { browserLabel } from "@/lib/sessions/browser-label";
import { newRemember, type NewRemember } from "@/lib/devices/remember";
import { RECOVERY_CODE_PATTERN } from "@/lib/factors/recovery-codes";
import { codeOfSeed, deviceCodeAskerTag, deviceCodeMatches, deviceCodeSeedTag, deviceCodeWindow } from "@/lib/factors/device-confirmation";
import { deviceCodeSeedOf, replaceDeviceCodeSeed } from "@/lib/factors/device-code-seeds";
import { secondStepMethods } from "@/lib/factors/store";
import {
  mailedCodeOpenedAtMs,
  MAILED_CODE_STEPS,
  PENDING_SIGN_IN_TRIES,
  type PendingChannel,
  type PendingSignIn,
  type PendingStep,
  type PendingTry,
} from "@/lib/factors/pending-sign-ins";

/** What a second step may answer with: a code of the authenticator app, a recovery code, or a passkey. */
export type SecondStepAnswer = { code: string } | { recoveryCode: string } | { passkey: ParsedAuthentication };

const ASK: Record<SecondStepMethod, string> = {
  totp: "Enter the 6-digit code from your authenticator app.",
  passkey: "Use your passkey to finish signing in.",
  recovery_code: "Enter one of your recovery codes.",
  // Said alike after a wrong password (whose stand-in mails nothing), so it promises no mail; the
  // owner's mailbox, not this answer, tells the owner which it was.
  email_code:
    "This device is new to the account. If the password was right, we emailed a 6-digit code to the account's address; it arrives within a minute. Enter it to finish signing in. No email after two minutes? Then the address or the password was not right: sign in again.",
};

// Mailbox first: nothing about the password was checked, so nothing is said about it.
const ASK_MAILBOX_FIRST =
  "Many sign-ins from this network failed, so a new browser here proves the mailbox first. If the address has an account, we emailed it a 6-digit code; it arrives within a minute. Enter it, and your password is checked next.";

// Said alike whether a code went out or not (a stand-in, the quota spent): only the mailbox tells.
const RESENT = "If the password was right, a new code is on its way to the account's address. Enter the newest one you receive.";

/**
 * The answer to a right password that has a second step to pass: 401 `mfa_required` (or
 * `device_confirmation_required`, for any password, when a new device waits for a mailed code) and
 * no session, no token. A browser gets the pending sign-in as an HttpOnly cookie (no script, and
 * no other browser, can hold it); an API client gets it as `mfa_token` (`confirmation_token`), to
 * send to its own route.
 */
export function secondStepRequired(
  gate: Gatehouse,
  pending: Extract<SignInOutcome, { ok: "second_step" }>["pending"],
  channel: PendingChannel,
): Response {
  const expiresInSeconds = Math.floor((pending.expiresAtMs - gate.clock()) / 1000);
  const message = pending.step === "mailbox" ? ASK_MAILBOX_FIRST : ASK[pending.methods[0] ?? "recovery_code"];
  const confirming = pending.step !== "second_factor";
  const error = confirming ? "device_confirmation_required" : "mfa_required";
  if (channel === "api") {
    const tokenField = confirming ? "confirmation_token" : "mfa_token";
    return json(401, { error, message, [tokenField]: pending.token, methods: pending.methods, expires_in: expiresInSeconds });
  }
  // A browser's factor step offers "Remember this browser" (docs/decisions/0033); a device
  // confirmation never does, so a stand-in's answer stays the same as a right password's.
  const rememberDays = confirming ? 0 : Math.floor(gate.config.devices.rememberMs / 86_400_000);
  const offers = { ...(rememberDays > 0 ? { rememberDays } : {}), ...(pending.step === "mailbox" ? { mailboxFirst: true } : {}) };
  const response = json(401, { error, message, methods: pending.methods, expiresInSeconds, ...offers });
  return setPendingSignInCookie(response, gate.config, pending.token, pending.expiresAtMs, gate.clock());
}

const PENDING_MESSAGES: Record<Exclude<PendingTry, { ok: true }>["reason"], string> = {
  unknown: "There is no sign-in waiting for a code here. Sign in with your password first.",
  expired: "This sign-in waited too long. Sign in with your password again.",
  used: "This sign-in was already finished or ended. Sign in with your password again.",
  tries: "Too many tries for this sign-in. Sign in with your password again.",
};

/** A second step without a live pending sign-in of its own: 401, and the browser drops the cookie. */
export function pendingRefused(gate: Gatehouse, reason: keyof typeof PENDING_MESSAGES, channel: PendingChannel): Response {
  const response = jsonError(401, "second_step_invalid", PENDING_MESSAGES[reason], { reason });
  return channel === "browser" ? clearPendingSignInCookie(response, gate.config) : response;
}

const WRONG: Record<"code" | "recoveryCode" | "emailCode", string> = {
  code: "That code is not right, or was already used. Enter the newest code from your authenticator app.",
  recoveryCode: "That recovery code is not right, or was already used.",
  emailCode: "That code is not right. Enter the code from the newest email, or sign in again for a new one.",
};

/** The answer to a wrong code: the tries the pending sign-in has left, and the lock's wait where one began. */
function wrongCode(kind: keyof typeof WRONG, attempts: number, retryAfterSeconds?: number): Response {
  return jsonError(401, "invalid_code", WRONG[kind], {
    triesLeft: Math.max(0, PENDING_SIGN_IN_TRIES - attempts),
    ...(retryAfterSeconds === undefined ? {} : { retryAfterSeconds }),
  });
}

/** The steps each route finishes: the browser's one form takes either; the token API has a route per step. */
export const BROWSER_STEPS: readonly PendingStep[] = ["second_factor", ...MAILED_CODE_STEPS];

type Finished = Extract<SignInOutcome, { ok: true }> & { purpose: PendingSignIn["purpose"] };
type Passed = { ok: true; finished: Finished } | { ok: false; refusal: Response };
const refused = (refusal: Response) => ({ ok: false as const, refusal });

/**
 * The second step, top to bottom, sealed like the first: the route has applied the per-address
 * limit and parsed the body once. Then: the pending sign-in, found by its token and counted (a
 * try is spent before its answer is checked), and for "Confirm it's you" held by the session that
 * asked → the per-account limit → the password it stood for still the account's (no reset or
 * change since) → the second step's own lock (the account's, or the known device's that passed
 * the password; a passkey does not meet it: nobody can guess a signature) → counted there too,
 * before the check → the answer checked → the pending sign-in spent once → the answer spent once
 * → the sign-in finished as a password alone would have finished it (completeSignIn).
 */
export async function passSecondStep(...args: Parameters<typeof answerStep>): Promise<Passed> {
  const passed = await answerStep(...args);
  // The address's budget for answers counts wrong ones only: an office whose staff pass theirs never spends it.
  if (passed.ok) await args[0].succeeded(passed.finished.user.id);
  return passed;
}

async function answerStep(
  limits: RouteLimits,
  token: string | undefined,
  channel: PendingChannel,
  answer: SecondStepAnswer,
  /** The live session this browser holds, if any: "Confirm it's you" is finished only by the session that asked. */
  liveSessionId: string | null,
  steps: readonly PendingStep[],
  /** The browser ticked "Remember this browser": granted only for a code of the app or a passkey. */
  rememberAsked = false,
): Promise<Passed> {
  const { gate, client } = limits;
  const tried = await gate.pendingSignIns.try(token ?? "", channel, steps, gate.clock());
  if (!tried.ok) {
    logSecurity(gate, { route: limits.path, outcome: "second_step_invalid", client, detail: tried.reason });
    return refused(pendingRefused(gate, tried.reason, channel));
  }
  const { pending } = tried;
  if (pending.purpose === "reauthenticate" && pending.sessionId !== liveSessionId) return refused(pendingRefused(gate, "unknown", channel));
  if (pending.step !== "second_factor") return confirmDevice(limits, pending, answer, channel);
  // Keyed by the known device too, where one passed the password: the owner's own bucket.
  const byAccount = await limits.limit("user", pending.deviceId ? `${pending.userId}:device:${pending.deviceId}` : pending.userId);
  if (byAccount) return refused(byAccount);
  // A password reset or change since the password step: that password no longer signs in, and
  // nothing (no code) is spent on trying.
  const user = await accountOf(gate, pending.userId);
  if (!user || user.credentialGeneration !== pending.credentialGeneration) return refused(pendingRefused(gate, "used", channel));

  const checked = await checkAnswer(limits, pending, answer);
  if (!checked.ok) return refused(checked.refusal);

  // The pending sign-in first, then the answer: of two answers racing on one pending sign-in one
  // finishes it and the other's code stays unspent; of two pending sign-ins racing with one code,
  // one spends it and the other ends with nothing.
  if (!(await gate.pendingSignIns.spend(pending.id, gate.clock()))) return refused(pendingRefused(gate, "used", channel));
  if (!(await checked.spend())) return refused(wrongCode("code" in answer ? "code" : "recoveryCode", PENDING_SIGN_IN_TRIES));
  if (checked.lockKey) await gate.lockouts.reset(checked.lockKey);
  if ("recoveryCode" in answer) {
    const browser = browserLabel(limits.userAgent);
    const left = String(await gate.factors.recoveryCodesLeft(pending.userId));
    await gate.events.accountChanged(pending.userId, "recovery_code_used", client, { browser, sessionId: pending.sessionId });
    void gate.recovery.notice("recovery_code_used", { id: pending.userId }, noticeOrigin(gate, limits), left);
  }
  const remember =
    rememberAsked && remembersAfter(gate, pending, answer) ? newRemember(gate.clock() + gate.config.devices.rememberMs) : undefined;
  const passed = await finish(limits, pending, user, "second_step", remember);
  if (passed.ok && remember) {
    const browser = browserLabel(limits.userAgent);
    await gate.events.accountChanged(pending.userId, "browser_remembered", client, { browser, sessionId: pending.sessionId });
  }
  return passed;
}

/**
 * Whether passing this step may remember the browser (docs/decisions/0033): a browser's sign-in,
 * by an authenticator code or a passkey. Never a recovery code (the way back for a lost factor,
 * not a factor to skip), never "Confirm it's you", never an API client (no cookie to hold the
 * secret), and the mailed device code never reaches here.
 */
function remembersAfter(gate: Gatehouse, pending: PendingSignIn, answer: SecondStepAnswer): boolean {
  if (gate.config.devices.rememberMs === 0 || "recoveryCode" in answer) return false;
  return pending.purpose === "sign_in" && pending.channel === "browser" && pending.step === "second_factor";
}

type CheckedAnswer = { ok: true; spend: () => Promise<boolean>; lockKey: string | null } | { ok: false; refusal: Response };

/**
 * The answer checked, not yet spent: a passkey's assertion (spent as it is checked; nobody can
 * guess a signature, so no lock), or a code counted on the second step's own lock (the account's,
 * or the known device's that passed the password) before it is compared.
 */
async function checkAnswer(
  limits: RouteLimits,
  pending: PendingSignIn & { userId: string },
  answer: SecondStepAnswer,
): Promise<CheckedAnswer> {
  const { gate, client } = limits;
  if ("passkey" in answer) {
    const used = await spendAssertion(limits, answer.passkey, { purpose: "second_step", boundTo: pending.id, owner: pending.userId });
    return used.ok ? { ok: true, spend: async () => true, lockKey: null } : { ok: false, refusal: passkeyRefused(used.reason) };
  }
  const lockKey = gate.secondFactorLockKey(pending.deviceId ? { deviceId: pending.deviceId } : { userId: pending.userId });
  const admitted = await gate.lockouts.admitAttempt(lockKey, gate.clock(), gate.config.factors.lockout);
  if (!admitted.allowed) {
    logSecurity(gate, { route: limits.path, outcome: "locked", client, userId: pending.userId, detail: "second_factor" });
    return { ok: false, refusal: secondFactorLocked(admitted.check) };
  }
  const kind = "code" in answer ? "code" : "recoveryCode";
  const checked =
    "code" in answer
      ? await gate.factors.checkTotp(pending.userId, answer.code, gate.clock())
      : await gate.factors.checkRecoveryCode(pending.userId, answer.recoveryCode, gate.clock());
  if (checked.ok) return { ok: true, spend: checked.spend, lockKey };
  if (checked.reason === "unreadable") {
    gate.log.error({
      event: "factor_secret_unreadable",
      userId: pending.userId,
      hint: "FACTOR_SECRET (or NEXTAUTH_SECRET it derives from) changed",
    });
  }
  gate.log.info({
    event: "second_step_failed",
    userId: pending.userId,
    kind,
    reason: checked.reason,
    failures: admitted.state.failureCount,
  });
  logSecurity(gate, { route: limits.path, outcome: "sign_in_failed", client, userId: pending.userId, detail: `second_factor_${kind}` });
  await gate.events.accountChanged(pending.userId, "second_step_failed", client, { browser: browserLabel(limits.userAgent) });
  const lockedUntilMs = admitted.state.lockedUntilMs;
  const retryAfterSeconds = lockedUntilMs === null ? undefined : Math.ceil((lockedUntilMs - gate.clock()) / 1000);
  return { ok: false, refusal: wrongCode(kind, pending.attempts, retryAfterSeconds) };
}

async function accountOf(gate: Gatehouse, userId: string | null) {
  const found = await gate.prisma.user.findUnique({
    where: { id: userId ?? NOBODY },
    select: { id: true, email: true, credentialGeneration: true, passwordBreachedAt: true },
  });
  if (!found) return null;
  const { passwordBreachedAt, ...user } = found;
  return { ...user, passwordBreached: passwordBreachedAt !== null };
}

type Account = NonNullable<Awaited<ReturnType<typeof accountOf>>>;

/** The sign-in its pending row stood for, finished as a password alone would have finished it. */
async function finish(
  limits: RouteLimits,
  pending: PendingSignIn,
  user: Account,
  via: "second_step" | "device_confirmation",
  remember?: NewRemember,
): Promise<Passed> {
  const finished = await completeSignIn(limits.gate, passedOf(limits, pending, user), user, via, undefined, remember);
  // No refusal of its own: the password was changed, or the account deleted, after it was read here.
  if (!finished.ok) return refused(finished.refusal ?? pendingRefused(limits.gate, "used", pending.channel));
  return { ok: true, finished: { ...finished, purpose: pending.purpose } };
}

/** The right password its pending row stands for, as the password step passed it, now from this request. */
function passedOf(limits: RouteLimits, pending: PendingSignIn, user: Account): PassedPassword {
  return {
    email: user.email,
    client: limits.client,
    device: pending.deviceId ? { id: pending.deviceId } : null,
    route: limits.path,
    userAgent: limits.userAgent,
    locale: limits.locale,
    sessionId: pending.sessionId,
    intent:
      pending.purpose === "reauthenticate"
        ? { kind: "reauthenticate", sessionId: pending.sessionId }
        : { kind: "sign_in", channel: pending.channel },
  };
}

/**
 * A new device's mailed code, after the pending sign-in was found and its try counted (its 5 tries
 * are what bound guesses at its code) → the code compared in constant time (before anything that
 * a stand-in could answer differently) → a wrong one counted on the username's lock for strangers,
 * a stand-in's alike (countWrongCode: never a refusal here, so strangers' codes elsewhere cannot
 * refuse the owner's own pending sign-in) → its account still on the password it passed → the
 * pending sign-in spent once → the sign-in finished, and the browser or app it finished on becomes
 * a known device; or, for an account with a second factor, its factor's pending sign-in (401
 * `mfa_required`): the password step answered it as it answers a wrong password, so the factor is
 * asked only now, and the mailbox never stands in for it. No per-account limit: it would tell a
 * right password's pending sign-in from a stand-in.
 */
async function confirmDevice(
  limits: RouteLimits,
  pending: Extract<PendingSignIn, { step: "device_confirmation" | "mailbox" }>,
  answer: SecondStepAnswer,
  channel: PendingChannel,
): Promise<Passed> {
  const { gate, client } = limits;
  // A mailed code's tries count on the username's lock for strangers (countWrongCode), not on the
  // per-account row: a stand-in has no account, and that row would tell it from a real one.
  limits.notApplied("user");
  if (!("code" in answer)) return refused(jsonError(400, "invalid_input", "Enter the 6-digit code we emailed you.", { fields: {} }));
  const guess = await takeCodeGuess(gate, limits, pending);
  const user =
    guess.allowed && deviceCodeMatches(gate.config.devices.codeSecret, pending.codeDigest, answer.code)
      ? await accountOf(gate, pending.userId)
      : null;
  if (!user) {
    const { userId } = pending;
    gate.log.info({ event: "device_confirmation_failed", ...(userId ? { userId } : { standIn: true }) });
    logSecurity(gate, { route: limits.path, outcome: "sign_in_failed", client, detail: "device_code", ...(userId ? { userId } : {}) });
    // In the background: a stand-in has no account to record it for, and must not answer sooner.
    if (userId) {
      const browser = browserLabel(limits.userAgent);
      gate.background.run("device_confirmation_failed", () =>
        gate.events.accountChanged(userId, "device_confirmation_failed", client, { browser }),
      );
    }
    await countWrongCode(gate, limits, pending);
    return refused(wrongCode("emailCode", pending.attempts));
  }
  await guess.giveBack();
  // A password reset or change since the password step: that password no longer signs in.
  if (user.credentialGeneration !== pending.credentialGeneration) return refused(pendingRefused(gate, "used", channel));
  // The code is spent by the first pending sign-in it finishes (its seed replaced, compare-and-set):
  // a copy of it (a forwarded mail, a phishing relay) finishes no other, and of two racing, one.
  const seed = await deviceCodeSeedOf(gate.prisma, user.id);
  const window = deviceCodeWindow(mailedCodeOpenedAtMs(pending));
  const current = seed !== null && codeOfSeed(gate.config.devices.codeSecret, user.id, seed, window, pending.codeDigest);
  if (!current || !(await replaceDeviceCodeSeed(gate.prisma, user.id, seed))) return refused(pendingRefused(gate, "used", channel));
  if (!(await gate.pendingSignIns.spend(pending.id, gate.clock()))) return refused(pendingRefused(gate, "used", channel));
  // Not a session: no password was checked. The browser is the account's now, and its password
  // is checked next, in the owner's lane.
  if (pending.step === "mailbox") return refused(await mailboxProved(limits, pending, user));
  const factors = await gate.factors.summary(user.id);
  if (factors.due) {
    await gate.events.accountChanged(user.id, "second_step_due", client, { browser: browserLabel(limits.userAgent) });
    const next = await openPending(gate, passedOf(limits, pending, user), user, {
      step: "second_factor",
      methods: secondStepMethods(factors),
    });
    // Not a session yet: the factor's step is the answer, as it is to a password.
    return refused(secondStepRequired(gate, next.pending, channel));
  }
  return finish(limits, pending, user, "device_confirmation");
}

/**
 * The mailbox proved first, as an unlock link proves it: this browser becomes a known device of
 * the account (only while the account is under the credentials the code was mailed for), "under
 * attack" ends for the owner, and the address's mailbox-first budget gets its sign-in back (and
 * its second-step budget its answer). It signs nobody in: the password is sent again and checked in the owner's lane.
 */
async function mailboxProved(limits: RouteLimits, pending: PendingSignIn, user: Account): Promise<Response> {
  const { gate, client } = limits;
  const nowMs = gate.clock();
  const browser = browserLabel(limits.userAgent);
  const { writes, device } = gate.devices.issuing(gate.usernameKey(user.email), nowMs, undefined, {
    label: browser,
    address: truncateAddress(client.address),
  });
  const account = { id: user.id, credentialGeneration: pending.credentialGeneration };
  if (!(await writeGuarded(gate.sql, credentialsUnchanged(account), writes))) return pendingRefused(gate, "used", "browser");
  await gate.lockouts.clearUnderAttack(gate.usernameKey(user.email));
  await limits.mailboxProved();
  // A passed step, as a right answer is: the address's budget for answers, which counts wrong
  // ones only, gets it back, so a crowd proving its mailboxes from one address never spends it.
  await limits.succeeded(user.id);
  await gate.events.accountChanged(user.id, "mailbox_proved", client, { browser });
  gate.log.info({ event: "mailbox_proved", userId: user.id });
  logSecurity(gate, { route: limits.path, outcome: "mailbox_proved", client, userId: user.id });
  const response = json(200, { status: "mailbox_proved", message: MAILBOX_PROVED });
  setDeviceCookie(response, gate.config, device.token, device.expiresAtMs, nowMs);
  return clearPendingSignInCookie(response, gate.config);
}

const MAILBOX_PROVED = "This browser is confirmed for the account. Your password is checked next.";

/**
 * One guess at a mailed code, taken before the code is compared (a burst of parallel guesses meets
 * the count, not the compare) and given back when it was right, so only wrong ones count: at
 * `deviceCodeGuesses` (10 by default) per account, code and address, that address's answers are a
 * wrong code's, without a compare. Keyed by the address, not by the code alone: a stranger's
 * guesses elsewhere never spend, and never retire, the code the owner is about to type (an
 * attacker's review of the first version, which retired it for everyone). A stand-in is counted
 * alike, by its username and window.
 */
async function takeCodeGuess(
  gate: Gatehouse,
  limits: RouteLimits,
  pending: Extract<PendingSignIn, { codeDigest: string | null }>,
): Promise<{ allowed: boolean; giveBack(): Promise<void> }> {
  const { userId, codeDigest } = pending;
  const code = userId !== null && codeDigest !== null ? ["code", userId, codeDigest] : ["stand-in", pending.usernameKey ?? ""];
  const key = [...code, String(deviceCodeWindow(mailedCodeOpenedAtMs(pending))), limits.client.key];
  const taken = await gate.limiter.consume("deviceCodeGuesses", key);
  return {
    allowed: taken.allowed,
    giveBack: async () => {
      if (taken.allowed && !taken.storeFailed) await gate.limiter.consume("deviceCodeGuesses", key, { cost: -1 });
    },
  };
}

/**
 * "Resend code" for this browser's device confirmation: the pending sign-in's own code mailed
 * again, only while its window is current (a later one would mail the owner an older code than a
 * newer sign-in's: answered as expired, sign in again), at most `deviceCodeResend` (2) times per
 * pending sign-in, charged to the asking address (`deviceCodeResendAddress`, per account) and
 * within the account's ceiling for that code (`deviceCodeMail`): a stranger's resends spend their
 * own address's budget, never the owner's. A stand-in's, or one whose code was spent since, is
 * answered alike and sends nothing. It guesses nothing, so it spends
 * no try and counts on no lock; the quotas bound the mail and the route's per-address limit the
 * work. The same work is done before the answer for every one (the seed read, the code made), and
 * the answer never says whether a mail went out: only the owner's mailbox does.
 */
export async function resendDeviceCode(limits: RouteLimits, token: string | undefined): Promise<Response> {
  const { gate, client } = limits;
  const nowMs = gate.clock();
  const found = await gate.pendingSignIns.live(token ?? "", "browser", MAILED_CODE_STEPS, nowMs);
  if (!found.ok) return pendingRefused(gate, found.reason, "browser");
  const { pending } = found;
  const window = deviceCodeWindow(mailedCodeOpenedAtMs(pending));
  if (window !== deviceCodeWindow(nowMs)) return pendingRefused(gate, "expired", "browser");
  const secret = gate.config.devices.codeSecret;
  const codeDigest = "codeDigest" in pending ? pending.codeDigest : null;
  // Per pending sign-in, beneath the account's quota: one stranger's sign-in cannot spend the owner's resends.
  const perPending = await gate.limiter.consume("deviceCodeResend", [pending.id]);
  if (perPending.allowed) {
    const seed = await deviceCodeSeedOf(gate.prisma, pending.userId ?? NOBODY);
    const current = seed !== null && codeOfSeed(secret, pending.userId ?? NOBODY, seed, window, codeDigest);
    // A stand-in's promise is for nobody and sends nothing, but it is written alike: the answer
    // waits for the same write either way.
    const user = { id: current ? (pending.userId ?? NOBODY) : NOBODY };
    const code = { window, seedTag: deviceCodeSeedTag(secret, seed ?? NOBODY), validUntilMs: pending.expiresAtMs };
    await gate.recovery.deviceCode(user, code, noticeOrigin(gate, limits), { askedBy: deviceCodeAskerTag(secret, client.key) });
  }
  gate.log.info({ event: "device_code_resend", ...(pending.userId ? { userId: pending.userId } : { standIn: true }) });
  logSecurity(gate, { route: limits.path, outcome: "device_confirmation_due", client, detail: "resend" });
  return json(202, { status: "code_resent", message: RESENT });
}

const CODE_SHAPE = "Enter the 6 digits your authenticator app shows.";
const RECOVERY_SHAPE = "A recovery code is ten letters and digits, like k7rq2-9xw4m.";

const codeField = z
  .string()
  .trim()
  .regex(/^\d{6}$/, CODE_SHAPE)
  .optional();
const recoveryCodeField = z.string().trim().regex(RECOVERY_CODE_PATTERN, RECOVERY_SHAPE).optional();

/** Exactly one of a 6-digit code or a recovery code: a body with both, or neither, is refused. */
function oneAnswer<T extends object>(fields: T, code: string | undefined, recoveryCode: string | undefined, ctx: z.RefinementCtx) {
  if ((code === undefined) === (recoveryCode === undefined)) {
    ctx.addIssue({ code: "custom", path: ["code"], message: "Send either a code or a recovery code." });
    return z.NEVER;
  }
  const answer: SecondStepAnswer = code !== undefined ? { code } : { recoveryCode: recoveryCode! };
  return { ...fields, answer };
}

/** The browser's second step, parsed once: the answer and where to go after it. */
export const browserSecondStepSchema = z
  .object({
    code: codeField,
    recoveryCode: recoveryCodeField,
    callbackUrl: z.string().max(2048).optional(),
    remember: z.boolean().optional(),
  })
  .transform(({ code, recoveryCode, callbackUrl, remember }, ctx) =>
    oneAnswer({ callbackUrl, remember: remember === true }, code, recoveryCode, ctx),
  );

/** An API client's second step, parsed once: its `mfa_token` and the answer. */
export const apiSecondStepSchema = z
  .object({ mfa_token: z.string().max(128), code: codeField, recovery_code: recoveryCodeField })
  .transform(({ mfa_token, code, recovery_code }, ctx) => oneAnswer({ mfaToken: mfa_token }, code, recovery_code, ctx));

/** An API client's device confirmation, parsed once: its `confirmation_token` and the mailed code. */
export const apiDeviceConfirmationSchema = z
  .object({
    confirmation_token: z.string().max(128),
    code: z
      .string()
      .trim()
      .regex(/^\d{6}$/, "Enter the 6 digits from the email."),
  })
  .transform(({ confirmation_token, code }) => ({ confirmationToken: confirmation_token, code }));

/** 400 for an answer of the wrong shape: not a try (nothing was guessed), so nothing is counted. */
export function answerRefused(error: z.ZodError): Response {
  const fields = fieldErrors(error);
  return jsonError(400, "invalid_input", Object.values(fields)[0] ?? "Enter the code.", { fields });
}

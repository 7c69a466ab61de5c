import { verifyAltcha, type CaptchaOutcome } from "@/lib/captcha/altcha";
import { levelDue, meetsLevel, type ChallengeTerms, type LevelDue } from "@/lib/captcha/difficulty";
import type { RouteLimits } from "@/lib/auth/limited";
import { busy, captchaInvalid, deviceLocked, unavailable, untrustedLocked } from "@/lib/http/refusals";
import { truncateAddress } from "@/lib/events/security-events";
import type { NoticeOrigin } from "@/lib/recovery/mails";
import { invalidLink } from "@/lib/auth/link-requests";
import type { LockoutCheck, LockoutPolicy } from "@/lib/lockout/lockout-rules";
import { wrongPasswordFingerprint } from "@/lib/lockout/wrong-passwords";
import { logSecurity } from "@/lib/auth/security-log";
import type { ClaimedDevice, KnownDevice } from "@/lib/devices/known-devices";
import type { ClientAddress } from "@/lib/http/client-address";
import { confirmationDueBeforeCheck, deviceCodeDigest, newDeviceCode, openAddress, sealAddress } from "@/lib/factors/device-confirmation";
import { secondStepMethods } from "@/lib/factors/store";
import type { Lane } from "@/lib/password/hash-budget";
import { browserLabel } from "@/lib/sessions/browser-label";
import { confirmAddress, markPasswordBreached, recordSignIn, signInToRecord, verifyCredentials } from "@/lib/users/accounts";
import type { AdmittedAttempt, LockoutSeen } from "@/lib/lockout/repository";
import type { BreachVerdict } from "@/lib/password/breached";
import type { Intent, SecondStepMethod, SignInOutcome, SignInAdmission } from "@/lib/password/admission";
import type { Gatehouse } from "@/lib/app";
import { browserSessionFields, writeSignIn } from "@/lib/auth/browser-session";
import { messageOf } from "@/lib/log/message";

/**
 * What a password sign-in read, once, from its request: the normalised email, the password and the
 * device token sent.
 */
export type PasswordAttempt = { email: string; password: string; deviceToken?: string | undefined };

/**
 * What shows the client is worth a password check, and what a right password is for: a solved
 * ALTCHA with its intent, or the emailed link that a confirmation carries (its 256-bit token is a
 * stronger proof than any puzzle; a confirmation signs the browser in).
 */
export type Proof = { altcha: string | undefined; intent: Intent } | { confirms: { linkId: string; userId: string } };

export type { Intent, SignInOutcome };

/**
 * Whose failures an attempt counts toward and what refuses it: a known device has its own lock
 * and the trusted lane of the hash budget; everyone else shares the username's lock (OWASP
 * device cookies).
 */
type Subject = { lane: Lane; key: string; policy: LockoutPolicy; refuse(check: Extract<LockoutCheck, { locked: true }>): Response };

function subjectOf(gate: Gatehouse, admission: Pick<SignInAdmission, "email" | "device">): Subject {
  if (admission.device) {
    return { lane: "trusted", key: gate.deviceLockKey(admission.device.id), policy: gate.deviceLockoutPolicy, refuse: deviceLocked };
  }
  return strangersOf(gate, gate.usernameKey(admission.email));
}

/** The username's lock that every client with no known device shares. */
function strangersOf(gate: Gatehouse, usernameKey: string): Subject {
  return { lane: "untrusted", key: usernameKey, policy: gate.lockoutPolicy, refuse: untrustedLocked };
}

const refused = (response: Response): SignInOutcome => ({ ok: false, refusal: response });

/**
 * The attempt's password as its subject's lock remembers a wrong one: keyed, truncated, and scoped
 * to the client that sent it (a stranger's address; a known device's own lock), so a repeat from
 * elsewhere is counted and tells nobody what this client sent (docs/decisions/0019).
 */
function fingerprintOf(gate: Gatehouse, admission: SignInAdmission, subject: Subject): string {
  const clientKey = subject.lane === "trusted" ? subject.key : admission.client.key;
  const scope = { usernameKey: gate.usernameKey(admission.email), clientKey };
  return wrongPasswordFingerprint(gate.config.passwords.wrongPasswordSecret, scope, admission.password);
}

/**
 * A password sign-in, top to bottom, for every route that takes a password (the browser sign-in,
 * the token API, the address confirmation and the password change). The route has already applied
 * the per-address limit (before the body) and parsed the body once; the layers here run cheapest
 * first, each returning its refusal:
 *   per-username limit → known device (its MAC) → ALTCHA → the owner's lane (the device's claim) →
 *   the strangers' lockout → hash budget → lockout again (a known device's the first time), counted → Argon2id.
 * The outcome comes back as a value: a user and a new device token, or the refusal to send (null:
 * the route's generic "wrong email or password"). The route then starts the session its way.
 * A right password is then looked up in the breach corpus (afterBreachCheck).
 */
export async function signInWithPassword(limits: RouteLimits, attempt: PasswordAttempt, proof: Proof): Promise<SignInOutcome> {
  const { gate, client } = limits;
  const { email, password, deviceToken } = attempt;

  // A forged, expired or another username's token is no token: an untrusted client. This is the
  // MAC alone, no read: whether a signed device is still live is what its claim finds, below.
  const signed = gate.devices.signed(deviceToken, gate.usernameKey(email), gate.clock());

  // The account's own device passes the limits strangers share in its own lane (lib/auth/limited.ts).
  const byUsername = await limits.limit("addressAndUsername", email, signed?.id ?? null);
  if (byUsername) return refused(byUsername);

  let solved: { due: LevelDue; terms: ChallengeTerms } | null = null;
  if ("altcha" in proof) {
    // As hard as this address's recent failures and the budget's pressure call for
    // (lib/captcha/difficulty.ts), unless the client is a known device of this very account.
    const due = levelDue({
      budgetPressure: gate.hashBudget.recentPressure(),
      addressFailures: gate.addressFailures.get(client.key) ?? 0,
      knownDevice: signed !== null,
    });
    const captcha = await verifyAltcha(proof.altcha, gate.altcha, gate.replays, gate.clock(), due);
    if (!captcha.ok) return captchaRefused(limits, email, captcha);
    solved = { due, terms: captcha.terms };
  }

  const lane = signed ? await claimLane(limits, email, signed) : { device: null, gone: false };
  // A revoked or replaced device was no owner's lane: it pays the address's limit after all.
  const byAddress = lane.gone ? await limits.deviceGone() : null;
  if (byAddress) return refused(byAddress);
  // A revoked or replaced device's token owes what anyone else owes: the level it was let off is
  // due after all (its solution is spent), so an old stolen cookie cheapens no guess. (The
  // challenge route sized its challenge as a stranger's: no live device.) A live device the lane
  // declines keeps its base size, as the challenge route gave it one: refused, it could not sign in.
  if (lane.gone && solved && !meetsLevel({ ...solved.due, knownDevice: false }, solved.terms, gate.clock())) {
    return captchaRefused(limits, email, { ok: false, reason: "too_easy" });
  }
  const device = lane.device;
  const subject = subjectOf(gate, { email, device });
  // Refuses a locked username before it queues for the hash budget; checkPassword decides again.
  // A known device is not checked here: its claim lets one of its sign-ins through at a time, so
  // a locked one takes a trusted slot for one statement, where its count presumes what a device
  // issued at its last sign-in has, no lock row (the count's compare-and-set reads when it has).
  const lockoutSeen = device ? { usernameKey: subject.key, row: null } : await checkStrangers(limits, email, subject);
  if (lockoutSeen instanceof Response) return refused(lockoutSeen);

  const admission = gate.admissions.issue({
    email,
    password,
    client,
    device,
    route: limits.path,
    userAgent: limits.userAgent,
    locale: limits.locale,
    confirms: "confirms" in proof ? proof.confirms : null,
    intent: "altcha" in proof ? proof.intent : { kind: "sign_in", channel: "browser" },
    lockoutSeen,
  });
  const outcome = await checkPassword(gate, admission);
  // Budgets a crowd of owners shares count failures only: a right password gives its attempt back.
  // Never for a device confirmation, which answers a right password and a wrong one alike.
  if (outcome.ok === true) await limits.succeeded(outcome.user.id);
  else if (outcome.ok === "second_step" && outcome.pending.step === "second_factor" && outcome.user)
    await limits.succeeded(outcome.user.id);
  return outcome;
}

/** The strangers' lock, before the hash budget: its refusal, or the row it read (the count starts from it). */
async function checkStrangers(limits: RouteLimits, email: string, subject: Subject): Promise<LockoutSeen | Response> {
  const { gate, client } = limits;
  const lockout = await gate.lockouts.check(subject.key, gate.clock(), subject.policy);
  if (!lockout.locked) return lockout.seen;
  logSecurity(gate, { route: limits.path, outcome: "locked", client, email, detail: subject.lane });
  return subject.refuse(lockout);
}

/**
 * Looks a right password up in the breach corpus and marks the account (told once per mark);
 * whether it was found. A breached password still signs in (the owner typed it; refusing would
 * lock them out with no way to change it), but every page then sends the owner to choose a new
 * one and the API answers 403 password_change_required until it is replaced; from a new device it
 * waits for a mailed code first. Only a right password is looked up, so wrong guesses cost no
 * lookup and learn nothing from it; an unknown verdict (off, slow, down) fails open, leaving an
 * existing mark as it is.
 */
async function markIfBreached(
  gate: Gatehouse,
  from: { client: ClientAddress; userAgent: string | null },
  user: { id: string; credentialGeneration: number },
  password: string,
): Promise<boolean> {
  if ((await gate.breachedPasswords.check(password)) !== "breached") return false;
  // Found, even if the mark is not kept: this runs after the sign-in was written, so a failure here
  // must not turn a session that exists into a 503 (the mark is made at the next sign-in).
  await recordBreach(gate, from, user).catch((error: unknown) =>
    gate.log.error({ event: "password_breach_mark_failed", userId: user.id, err: messageOf(error) }),
  );
  return true;
}

/** Marks a right password found breached (told to the owner once per mark). */
async function recordBreach(
  gate: Gatehouse,
  from: { client: ClientAddress; userAgent: string | null },
  user: { id: string; credentialGeneration: number },
): Promise<void> {
  if (await markPasswordBreached(gate.prisma, user.id, user.credentialGeneration, gate.clock())) {
    await gate.events.accountChanged(user.id, "password_found_breached", from.client, { browser: browserLabel(from.userAgent) });
    gate.recovery.notice("password_breached", { id: user.id }, noticeOrigin(gate, from));
    gate.log.info({ event: "password_found_breached", userId: user.id });
  }
}

// Long enough for a queued check and Argon2id; a request that dies frees the device after it.
const DEVICE_CLAIM_MS = 30_000;

function captchaRefused(limits: RouteLimits, email: string, captcha: Extract<CaptchaOutcome, { ok: false }>): SignInOutcome {
  logSecurity(limits.gate, { route: limits.path, outcome: "captcha_invalid", client: limits.client, email, detail: captcha.reason });
  return refused(captchaInvalid(captcha));
}

/**
 * The owner's lane is for owners: a device serves one sign-in at a time, and a username gets the
 * lane a few times an hour (knownDeviceLane, spent only by a live device's claim), so neither
 * self-registered accounts nor a copied token can fill the trusted slots. Declined, the attempt
 * goes on as an untrusted client's; "gone": the token's device was revoked or replaced.
 */
async function claimLane(
  limits: RouteLimits,
  email: string,
  signed: KnownDevice,
): Promise<{ device: ClaimedDevice | null; gone: boolean }> {
  const { gate } = limits;
  const usernameKey = gate.usernameKey(email);
  const nowMs = gate.clock();
  const claim = await gate.devices.claim(signed.id, usernameKey, nowMs, DEVICE_CLAIM_MS);
  if (claim === "gone") return { device: null, gone: true };
  if (claim === "claimed") {
    const device: ClaimedDevice = { id: signed.id, claimedUntilMs: nowMs + DEVICE_CLAIM_MS };
    // A claim the lane then declines (or a limiter that throws) holds the device no longer.
    const lane = await gate.limiter.consume("knownDeviceLane", [usernameKey]).catch(async (error: unknown) => {
      await gate.devices.release(device.id, device.claimedUntilMs).catch(() => {});
      throw error;
    });
    if (lane.allowed) return { device, gone: false };
    await gate.devices.release(device.id, device.claimedUntilMs);
  }
  gate.log.info({ event: "device_lane_declined", reason: claim === "claimed" ? "lane_limit" : "device_in_use" });
  return { device: null, gone: false };
}

/**
 * The one function that runs Argon2id for a sign-in. It needs an unused admission from this
 * process's desk (only signInWithPassword makes one, after the cheap layers); inside a hash-budget
 * slot of its lane it admits the attempt against its subject's lockout atomically (counting it
 * before the verification, so parallel guesses cannot all pass a check none has counted yet),
 * then verifies. A success issues a new device token in place of the old one.
 */
export async function checkPassword(gate: Gatehouse, admission: SignInAdmission): Promise<SignInOutcome> {
  if (!gate.admissions.take(admission)) {
    gate.log.error({ event: "password_check_refused", reason: "no_admission" });
    return { ok: false, refusal: null };
  }
  let outcome: SignInOutcome | undefined;
  try {
    outcome = await checkAdmitted(gate, admission);
  } catch (error) {
    gate.log.error({ event: "password_check_failed", err: messageOf(error) });
    logSecurity(gate, { route: admission.route, outcome: "unavailable", client: admission.client, email: admission.email });
    outcome = { ok: false, refusal: unavailable() };
  }
  // Whatever happened short of a success (which replaced the device), the device is free again.
  if (outcome.ok !== true && admission.device)
    await gate.devices.release(admission.device.id, admission.device.claimedUntilMs).catch(() => {});
  return outcome;
}

async function checkAdmitted(gate: Gatehouse, admission: SignInAdmission): Promise<SignInOutcome> {
  const { password, client, device, confirms, intent } = admission;
  const subject = subjectOf(gate, admission);
  // A sign-in from a client with no known device may wait for a mailed code (below), and a
  // password in a breach corpus makes it wait whether it is right or wrong.
  const confirmable = intent.kind === "sign_in" && device === null && confirms === null && gate.config.devices.confirmation !== "off";
  type Checked = { refusal: Response } | { attempt: Admitted; user: VerifiedAttempt; verdict: Verdict };
  const checked = await gate.hashBudget.run(
    async (): Promise<Checked> => {
      // Counted from the check's read (its write compares): one statement fewer for every attempt.
      // A known device's count reads its username's strangers' lock too, whose cap its success lifts.
      const strangers = device ? { usernameKey: gate.usernameKey(admission.email), policy: gate.lockoutPolicy } : undefined;
      // A wrong password this client already sent in the streak is admitted uncounted; it is
      // still verified (Argon2id, so its time tells nothing) and answered as any wrong password.
      const attempt = await gate.lockouts.admitAttempt(
        subject.key,
        gate.clock(),
        subject.policy,
        admission.lockoutSeen ?? undefined,
        strangers,
        fingerprintOf(gate, admission, subject),
      );
      if (!attempt.allowed) {
        logSecurity(gate, { route: admission.route, outcome: "locked", client, email: admission.email, detail: subject.lane });
        return { refusal: subject.refuse(attempt.check) };
      }
      // The breach lookup starts only once the attempt is admitted (a refused one spends no range
      // request) and runs beside Argon2id, so its answer is rarely waited for (it fails open after
      // its timeout).
      const verdict = confirmable ? gate.breachedPasswords.check(password).catch(() => "unknown" as const) : null;
      const endTimer = gate.metrics.passwordCheckSeconds.startTimer();
      const user = await verifyCredentials(gate.sql, { email: admission.email, password }, gate.hasher, (error) =>
        gate.log.warn({ event: "password_rehash_failed", err: messageOf(error) }),
      );
      endTimer();
      return { attempt, user, verdict };
    },
    (): Checked => {
      logSecurity(gate, { route: admission.route, outcome: "busy", client, email: admission.email, detail: subject.lane });
      return { refusal: busy() };
    },
    subject.lane,
  );
  // The slot is Argon2id's alone: what a counted, verified attempt leads to (the breach verdict
  // awaited, the database writes) runs once the slot is free, so a slow range service holds none.
  const outcome: SignInOutcome =
    "refusal" in checked
      ? { ok: false, refusal: checked.refusal }
      : await decide(gate, admission, subject, checked.attempt, checked.user, checked.verdict);
  // A right password that signed in with no verdict waited for (a known device, the API with its
  // device token, "Confirm it's you") is looked up now, outside the slot.
  if (outcome.ok === true && !confirmable && intent.kind !== "change_password" && !outcome.passwordChangeRequired) {
    if (await markIfBreached(gate, admission, outcome.user, password)) return { ...outcome, passwordChangeRequired: true };
  }
  return outcome;
}

type Admitted = Extract<AdmittedAttempt, { allowed: true }>;
type VerifiedAttempt = Awaited<ReturnType<typeof verifyCredentials>>;
type Verdict = Promise<BreachVerdict> | null;

/**
 * What a counted, verified password attempt leads to: a failure (or its stand-in), a pending
 * second step or device confirmation, or the finished sign-in.
 */
async function decide(
  gate: Gatehouse,
  admission: SignInAdmission,
  subject: Subject,
  attempt: Admitted,
  user: VerifiedAttempt,
  verdict: Verdict,
): Promise<SignInOutcome> {
  const { email, password, client, device, route, confirms, intent } = admission;
  const browser = browserLabel(admission.userAgent);
  const { userAgent, locale, sessionId } = admission;
  const passed: PassedPassword = { email, client, device, route, userAgent, locale, sessionId, intent };
  const nowMs = gate.clock();
  // A sign-in from a client with no known device, on a username under attack (or always), waits
  // for a mailed code whether the password is right or not (lib/factors/device-confirmation.ts).
  const confirmable = verdict !== null;
  const underAttack = confirmable && confirmationDueBeforeCheck(gate.config.devices.confirmation, attempt.lastFailedAtMs, nowMs);
  // So does a password in a breach corpus, wrong as well as right, so the answer does not tell
  // them apart. Under attack the code is due anyway, and a right password's mark is found in the background.
  const submittedBreached = confirmable && !underAttack && (await verdict) === "breached";
  const standIn = underAttack || submittedBreached;

  // An account whose address is not confirmed yet fails exactly like a wrong password, even
  // for the right one, unless this attempt carries the address's confirmation link: any other
  // answer would tell whoever just registered an address that it had no account.
  const confirming = confirms !== null && user !== null && user.id === confirms.userId;
  const unconfirmed = user !== null && !user.emailVerified && !confirming && gate.config.email.requireVerification;
  if (!user || unconfirmed || (confirms !== null && !confirming)) {
    // Its owner gets the link again (within the recovery-mail quota).
    if (user && unconfirmed) gate.recovery.verificationNeeded(user);
    // Already counted by admitAttempt, whether or not the account exists.
    await countedWithoutSession(gate, admission, subject, attempt, "failure", nowMs, fingerprintOf(gate, admission, subject));
    gate.log.info({
      event: "sign_in_failed",
      lane: subject.lane,
      failureCount: attempt.state.failureCount,
      locked: attempt.state.lockedUntilMs !== null,
      ...(unconfirmed ? { emailUnverified: true } : {}),
    });
    logSecurity(gate, { route, outcome: "sign_in_failed", client, email, detail: subject.lane });
    const capped = subject.policy.capFailures === attempt.state.failureCount;
    // The owner's own right password before confirming is told to them as such, never as a wrong one.
    const record = () =>
      gate.events.signInFailed(email, client, attempt.state, capped && !device, { browser }, unconfirmed ? "unconfirmed" : "wrong");
    // A stand-in's record waits for nobody, as a right password's "device_confirmation_due" does:
    // the answer then costs the same awaited work whether the password was right or wrong.
    if (standIn) gate.background.run("sign_in_failed", record);
    else await record();
    // A device that keeps failing is more likely stolen than mistyped on: at the cap it is revoked.
    if (device && capped) await gate.devices.forget(device.id);
    return standIn ? openPending(gate, passed, null, { step: "device_confirmation" }) : { ok: false, refusal: null };
  }
  if (confirming) {
    // The link is spent only by its right password, once: of two racing confirmations one wins.
    if (!(await gate.emailTokens.use(confirms.linkId, nowMs))) return { ok: false, refusal: invalidLink() };
    // Proof of the mailbox: what marked the username under attack (a stranger, or the owner's own
    // sign-in before confirming, marked as a wrong password is so the next answer tells nothing)
    // makes the owner's new devices wait for no code now (invariant 11).
    await gate.lockouts.clearUnderAttack(gate.usernameKey(email));
    if (await confirmAddress(gate.prisma, user.id, nowMs)) {
      await gate.events.accountChanged(user.id, "email_verified", client, { browser });
      gate.log.info({ event: "email_verified", userId: user.id });
    }
  }
  if (user.rehashed) gate.log.info({ event: "password_rehashed", userId: user.id });
  if (intent.kind === "change_password") return completeSignIn(gate, passed, user, "password", attempt.alongside);

  // Only a right password is marked as breached. Where the answer does not wait for the verdict,
  // it is found in the background, so a right password answers as soon as a wrong one.
  const breached = user.passwordBreached || submittedBreached;
  const markInBackground = () =>
    gate.background.run("breach_check", async () => void (await markIfBreached(gate, admission, user, password)));
  if (submittedBreached) await recordBreach(gate, admission, user);
  else if (underAttack) markInBackground();
  // A mark from an earlier sign-in holds too: a right password found breached before is never a
  // session from a new device without the code.
  const confirmDevice = confirmable && (standIn || breached);
  if (confirmDevice) {
    // Counted as the stand-in for a wrong password is (the lock, the address's failures, the mark
    // "under attack"), and recorded in the background, so that nothing after it tells them apart.
    // An account with a second factor waits for the code too, and is asked its factor after it
    // (lib/auth/second-step.ts): answering it mfa_required here would tell a right password
    // from the wrong ones that this step answers alike.
    await countedWithoutSession(gate, admission, subject, attempt, "failure", nowMs, fingerprintOf(gate, admission, subject));
    gate.background.run("device_confirmation_due", () =>
      gate.events.accountChanged(user.id, "device_confirmation_due", client, { browser }),
    );
    return openPending(gate, passed, user, { step: "device_confirmation" });
  }
  // The second step, where the account has one: no session, no token, no device token and no
  // lockout reset yet (they come with the step); only a pending sign-in, bound to this client.
  // (Read with the password hash, before Argon2id: the same statements for a right password and a wrong one.)
  const factors = user.factors;
  if (factors.due) {
    // This right password stays counted on the lock until its step is passed; the owner sees it
    // in the events and, when it is the one that locks strangers out, by mail, as a wrong
    // password would tell them: someone may hold the password.
    markInBackground();
    await gate.events.accountChanged(user.id, "second_step_due", client, { browser });
    await countedWithoutSession(gate, admission, subject, attempt, "second_step", nowMs);
    return openPending(gate, passed, user, { step: "second_factor", methods: secondStepMethods(factors) });
  }
  return completeSignIn(gate, passed, { ...user, passwordBreached: breached }, "password", attempt.alongside);
}

/**
 * The bookkeeping of a counted attempt that ends without a session: the lock episode it may
 * start (a metric, and one mail to the owner, by the failure that starts the strangers' episode,
 * offering a way past it; later failures of the episode send none). A failure, or the device
 * confirmation that stands in for one, also counts toward the address's failures (the ALTCHA
 * level), leaves its password's fingerprint on the subject's lock (right or wrong alike, so a
 * repeat is answered the same either way), and, from an untrusted client, marks the username
 * under attack for the next 24 hours, which a success does not clear (proof of the mailbox
 * does); a right password waiting for its second factor does none of these. A repeat admitted
 * uncounted starts no episode.
 */
async function countedWithoutSession(
  gate: Gatehouse,
  from: Pick<SignInAdmission, "client" | "device" | "userAgent"> & { email: string | null },
  subject: Subject,
  attempt: Admitted,
  as: "failure" | "second_step",
  nowMs: number,
  /** The password's fingerprint (a wrong code has none). */
  fingerprint: string | null = null,
): Promise<void> {
  if (attempt.counted && attempt.state.lockedUntilMs !== null) gate.metrics.lockoutsStarted.inc({ lane: subject.lane });
  if (as === "failure") {
    gate.addressFailures.set(from.client.key, (gate.addressFailures.get(from.client.key) ?? 0) + 1);
    await gate.lockouts.markFailed(subject.key, nowMs, {
      underAttack: subject.lane === "untrusted",
      ...(fingerprint ? { fingerprint } : {}),
    });
  }
  if (!from.device && from.email !== null && attempt.counted && attempt.state.failureCount === subject.policy.threshold)
    gate.recovery.lockedOut(from.email, noticeOrigin(gate, from));
}

/**
 * A wrong mailed code for a new device, on a stand-in or on a right password's pending sign-in
 * alike: counted where a stranger's wrong password is, on the username's lock for strangers, with
 * what such a failure brings (the address's failures, "under attack", and at the threshold the
 * unlock link to the owner, who is found by the address the pending sign-in sealed). That lock does
 * not gate codes, so it counts them even while it holds: each pending sign-in's own 5 tries do, and
 * the owner's is never refused for codes strangers sent on theirs (docs/decisions/0020). Only a
 * pending sign-in's first wrong code counts: codes need no proof of work, and counting all five
 * would let a stranger double the lock five times for each password it sends (an attacker's review).
 */
export async function countWrongCode(
  gate: Gatehouse,
  from: Pick<SignInAdmission, "client" | "userAgent">,
  pending: { usernameKey: string | null; sealedEmail: string | null; attempts: number },
): Promise<void> {
  if (pending.usernameKey === null || pending.attempts > 1) return;
  const subject = strangersOf(gate, pending.usernameKey);
  const nowMs = gate.clock();
  const attempt = await gate.lockouts.admitAttempt(subject.key, nowMs, { ...subject.policy, countWhileLocked: true });
  // Never refused (counted while locked); the type allows it.
  if (!attempt.allowed) return;
  const email = openAddress(gate.config.devices.codeSecret, subject.key, pending.sealedEmail);
  await countedWithoutSession(gate, { ...from, device: null, email }, subject, attempt, "failure", nowMs);
}

/**
 * A right password (or confirmation link), with what its admission chose: the client, its known
 * device (the one a success replaces; its claim is not needed past the check), the session id,
 * the intent. A pending sign-in keeps these for the second step.
 */
export type PassedPassword = Pick<SignInAdmission, "email" | "client" | "route" | "userAgent" | "locale" | "sessionId" | "intent"> & {
  device: KnownDevice | null;
};

/**
 * The pending sign-in a right password (or, for a device confirmation, any password) leaves: the
 * second factor's, or a device confirmation whose code is mailed to the owner. A stand-in (no
 * user) is stored and counted like a real one, and has no code.
 */
export async function openPending(
  gate: Gatehouse,
  passed: PassedPassword,
  user: { id: string; email: string; credentialGeneration: number } | null,
  next: { step: "second_factor"; methods: SecondStepMethod[] } | { step: "device_confirmation" },
): Promise<Extract<SignInOutcome, { ok: "second_step" }>> {
  const { intent } = passed;
  const code = next.step === "device_confirmation" && user ? newDeviceCode() : null;
  const usernameKey = gate.usernameKey(passed.email);
  const common = {
    purpose: intent.kind === "reauthenticate" ? ("reauthenticate" as const) : ("sign_in" as const),
    channel: intent.kind === "sign_in" ? intent.channel : ("browser" as const),
    sessionId: intent.kind === "reauthenticate" ? intent.sessionId : passed.sessionId,
    deviceId: passed.device?.id ?? null,
    credentialGeneration: user?.credentialGeneration ?? 0,
    route: passed.route,
    browser: browserLabel(passed.userAgent),
    address: truncateAddress(passed.client.address),
    nowMs: gate.clock(),
  };
  const pending =
    next.step === "second_factor"
      ? await gate.pendingSignIns.open({ ...common, step: "second_factor", userId: user!.id })
      : await gate.pendingSignIns.open({
          ...common,
          step: "device_confirmation",
          userId: user?.id ?? null,
          codeDigest: code === null ? null : deviceCodeDigest(gate.config.devices.codeSecret, code),
          usernameKey,
          sealedEmail: sealAddress(gate.config.devices.codeSecret, usernameKey, passed.email),
        });
  const methods: SecondStepMethod[] = next.step === "second_factor" ? next.methods : ["email_code"];
  if (user && code !== null)
    gate.recovery.deviceCode(user, code, Math.round((pending.expiresAtMs - common.nowMs) / 60_000), noticeOrigin(gate, passed));
  const event = next.step === "second_factor" ? "second_step_due" : "device_confirmation_due";
  gate.log.info({ event, methods, ...(user ? { userId: user.id } : { standIn: true }) });
  logSecurity(gate, {
    route: passed.route,
    outcome: event,
    client: passed.client,
    email: passed.email,
    ...(user ? { userId: user.id } : {}),
  });
  return {
    ok: "second_step",
    pending: { ...pending, step: next.step, methods },
    user: user ? { id: user.id, credentialGeneration: user.credentialGeneration } : null,
  };
}

/**
 * What every finished sign-in does, after the password alone or after its second step: the
 * lockouts its success clears, a new device token in place of the old one, and the record of it
 * (a sign-in event, the first-sign-in mark and the new-device notice; for "Confirm it's you" a
 * reauthentication event; for a password change nothing, which the route records).
 */
export async function completeSignIn(
  gate: Gatehouse,
  passed: PassedPassword,
  user: {
    id: string;
    email: string;
    credentialGeneration: number;
    passwordBreached: boolean;
    signedInBefore?: boolean;
    lastLocale?: string | null;
  },
  via: "password" | "second_step" | "device_confirmation" = "password",
  strangersSeen?: LockoutCheck & { seen: LockoutSeen },
): Promise<Extract<SignInOutcome, { ok: true }> | { ok: false; refusal: Response | null }> {
  const { email, client, device, route, intent } = passed;
  const browser = browserLabel(passed.userAgent);
  const nowMs = gate.clock();
  const usernameKey = gate.usernameKey(email);
  const issuing = gate.devices.issuing(usernameKey, nowMs, device?.id, { label: browser, address: truncateAddress(client.address) });
  const lane = device ? "trusted" : "untrusted";
  let sessionOpen = false;
  if (intent.kind === "sign_in") {
    // The owner's mails follow the language of a sign-in that proved more than a password typed on
    // a new device (a known device, the second step, the mailed code): whoever holds only the
    // password cannot make the owner's "new sign-in" warning, and later mails, unreadable to them.
    const locale = device || via !== "password" ? passed.locale : null;
    // A browser's session is written here, with its device and its event: one statement
    // (lib/db/one-statement.ts), so one round trip, and all three or none.
    sessionOpen = intent.channel === "browser";
    const written = await writeSignIn(
      gate,
      user,
      issuing.writes,
      gate.events.signInSucceededWrites(user.id, client, { browser, sessionId: passed.sessionId }),
      ...(sessionOpen
        ? [gate.sessions.creating(browserSessionFields(gate, user, client, passed.userAgent, passed.sessionId, nowMs)).writes]
        : []),
    );
    if (!written.ok) return written;
    // After the writes: a sign-in that could not be written is not the account's first.
    const first = signInToRecord(user, locale) ? await recordSignIn(gate.prisma, user.id, nowMs, locale) : false;
    // A new device of an account that has signed in before: its first device is no news.
    if (!device && !first) gate.recovery.notice("new_device_sign_in", user, noticeOrigin(gate, passed));
  } else {
    const written = await writeSignIn(gate, user, issuing.writes);
    if (!written.ok) return written;
    // The owner of a live session proved it again: recorded as that, for that session; no sign-in happened.
    if (intent.kind === "reauthenticate") {
      await gate.events.accountChanged(user.id, "reauthenticated", client, { browser, sessionId: intent.sessionId });
    }
  }
  // The locks this success clears, once it is written (a sign-in that was not clears none). The
  // sign-in stands if this fails: a lock left on refuses strangers, and the owner is in.
  await clearLocks(gate, usernameKey, device, strangersSeen, nowMs).catch((error: unknown) =>
    gate.log.error({ event: "lockout_reset_failed", userId: user.id, err: messageOf(error) }),
  );
  gate.log.info({ event: "sign_in_succeeded", lane, userId: user.id, via });
  logSecurity(gate, { route, outcome: "sign_in_succeeded", client, email, detail: lane, userId: user.id });
  return {
    ok: true,
    user: { id: user.id, email: user.email, credentialGeneration: user.credentialGeneration },
    device: { token: issuing.device.token, expiresAtMs: issuing.device.expiresAtMs },
    sessionId: passed.sessionId,
    sessionOpen,
    passwordChangeRequired: user.passwordBreached,
  };
}

/**
 * The locks a written sign-in clears. From a known device, its own lock needs no reset: the device
 * was replaced, and no token names its id again (the row, its one counted attempt, goes with the
 * retention pass); strangers stay locked out while the owner signs in, except NIST's cap, which
 * lasts only until the owner signs in from a known device. The password path read it with the
 * device's count, before the hash: a cap reached in between stays until the owner's next sign-in
 * from a known device, or its hold ends (one statement fewer for every owner). From a new device
 * (a right password, or its second step), the username's lock goes.
 */
async function clearLocks(
  gate: Gatehouse,
  usernameKey: string,
  device: KnownDevice | null,
  strangersSeen: (LockoutCheck & { seen: LockoutSeen }) | undefined,
  nowMs: number,
): Promise<void> {
  if (!device) return gate.lockouts.reset(usernameKey);
  const strangers = strangersSeen ?? (await gate.lockouts.check(usernameKey, nowMs, gate.lockoutPolicy));
  if (strangers.locked && strangers.capped) await gate.lockouts.resetAsSeen(strangers.seen);
}

/** Where a sign-in came from, as an email to the owner tells it (the account page's words). */
export function noticeOrigin(gate: Gatehouse, from: { client: { address: string }; userAgent: string | null }): NoticeOrigin {
  return { browser: browserLabel(from.userAgent), address: truncateAddress(from.client.address), atMs: gate.clock() };
}

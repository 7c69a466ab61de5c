import type { Gatehouse } from "@/lib/app";
import { completeSignIn, noticeOrigin, openPending, type PassedPassword } from "@/lib/auth/complete-sign-in";
import type { Intent, SignInOutcome } from "@/lib/auth/sign-in-outcome";
import { invalidLink } from "@/lib/auth/link-requests";
import type { RouteLimits } from "@/lib/auth/limited";
import { logSecurity } from "@/lib/auth/security-log";
import { verifyAltcha, type CaptchaOutcome } from "@/lib/captcha/altcha";
import { levelDue, meetsLevel, type ChallengeTerms, type LevelDue } from "@/lib/captcha/difficulty";
import type { ClaimedDevice, KnownDevice } from "@/lib/devices/known-devices";
import { newRemember, rememberDigestOf } from "@/lib/devices/remember";
import { AT_RISK_WINDOW_MS, confirmationDueBeforeCheck, openAddress } from "@/lib/factors/device-confirmation";
import { secondStepMethods } from "@/lib/factors/store";
import type { ClientAddress } from "@/lib/http/client-address";
import { busy, captchaInvalid, deviceLocked, unavailable, untrustedLocked } from "@/lib/http/refusals";
import { LockoutAttempt } from "@/lib/lockout/attempt";
import type { LockoutCheck, LockoutPolicy } from "@/lib/lockout/lockout-rules";
import type { AdmittedAttempt } from "@/lib/lockout/repository";
import { wrongPasswordFingerprint } from "@/lib/lockout/wrong-passwords";
import { messageOf } from "@/lib/log/message";
import type { BreachVerdict } from "@/lib/password/breached";
import type { Lane } from "@/lib/password/hash-budget";
import { browserLabel } from "@/lib/sessions/browser-label";
import { newSessionId } from "@/lib/sessions/browser-sessions";
import { confirmAddress, mailableAccount, markPasswordBreached, verifyCredentials } from "@/lib/users/accounts";

/**
 * The password corridor, and the only way a sign-in reaches Argon2id: `checkPassword` is private
 * to this module, and only `signInWithPassword` calls it, after every cheap layer
 * (docs/decisions/0022-the-corridor-module-guards-argon2id.md).
 */

/**
 * What a password sign-in read, once, from its request: the normalised email, the password, the
 * device token sent and, from a browser, its "Remember this browser" secret.
 */
export type PasswordAttempt = { email: string; password: string; deviceToken?: string | undefined; rememberSecret?: string | undefined };

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
type Subject = {
  lane: Lane;
  key: string;
  policy: LockoutPolicy;
  refuse(check: Extract<LockoutCheck, { locked: true }>): Response;
};

/**
 * What the password check is given once a request has passed every cheap layer: who signs in from
 * where (PassedPassword), the password, the address-confirmation link it carries (spent only by
 * the right password) and its handle on its subject's lock (lib/lockout/attempt.ts). Made only in
 * signInWithPassword.
 */
type Admission = PassedPassword &
  Readonly<{
    password: string;
    device: ClaimedDevice | null;
    /** The digest of the "Remember this browser" secret sent, if well-formed. */
    remembers: string | null;
    confirms: Readonly<{ linkId: string; userId: string }> | null;
    subject: Subject;
    lock: LockoutAttempt;
  }>;

const refused = (response: Response): SignInOutcome => ({ ok: false, refusal: response });

/**
 * A password sign-in, top to bottom, for every route that takes a password (the browser sign-in,
 * the token API, the address confirmation and the password change). The route has already applied
 * the per-address limit (before the body) and parsed the body once; the layers here run cheapest
 * first, each returning its refusal:
 *   per-username limit → known device (its MAC) → ALTCHA → the owner's lane (the device's claim) →
 *   the strangers' lockout → hash budget → lockout again (a known device's the first time), counted → Argon2id.
 * The outcome comes back as a value: a user and a new device token, or the refusal to send (null:
 * the route's generic "wrong email or password"). The route then starts the session its way.
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

  const solved = "altcha" in proof ? await passAltcha(limits, email, proof.altcha, signed !== null) : null;
  if (solved && "refusal" in solved) return solved;

  const lane = signed ? await claimLane(limits, email, signed) : { device: null, gone: false };
  if (lane.gone) {
    const owed = await goneDeviceOwes(limits, email, solved);
    if (owed) return owed;
  }
  const device = lane.device;
  // The address's checks for new devices are spent: this browser proves the mailbox before any
  // password check, and its password is checked after, in the owner's lane.
  if (!device && limits.mailboxFirst && "altcha" in proof) return mailboxFirst(limits, email, proof.intent);
  const subject = subjectOf(gate, email, device);
  const lock = lockOf(gate, email, subject, device);
  // Refuses a locked username before it queues for the hash budget; checkPassword decides again.
  // A known device is not checked here: its claim lets one of its sign-ins through at a time, so
  // a locked one takes a trusted slot for one statement, where its count presumes what a device
  // issued at its last sign-in has, no lock row (the count's compare-and-set reads when it has).
  if (!device) {
    const locked = await checkStrangers(limits, email, subject, lock);
    if (locked) return refused(locked);
  }

  const outcome = await checkPassword(gate, {
    email,
    password,
    client,
    device,
    remembers: rememberDigestOf(attempt.rememberSecret),
    route: limits.path,
    userAgent: limits.userAgent,
    locale: limits.locale,
    sessionId: newSessionId(),
    confirms: "confirms" in proof ? proof.confirms : null,
    intent: "altcha" in proof ? proof.intent : { kind: "sign_in", channel: "browser" },
    subject,
    lock,
  });
  // Budgets a crowd of owners shares count failures only: a right password gives its attempt back.
  // Never for a device confirmation, which answers a right password and a wrong one alike.
  if (outcome.ok === true) await limits.succeeded(outcome.user.id);
  else if (outcome.ok === "second_step" && outcome.pending.step === "second_factor" && outcome.user)
    await limits.succeeded(outcome.user.id);
  return outcome;
}

/**
 * Mailbox first (docs/owner-lane.md): no password is checked. The account, if it has a confirmed
 * address, is mailed a code (within its code quota); anyone else gets a stand-in; the answer is
 * the same. The right code makes the browser a known device (lib/auth/second-step.ts). Not a
 * failure: the address's failure budgets get the attempt back, and its mailbox-first budget
 * counted it instead. No lock is checked: nothing is guessed here, and a code is the owner's way
 * past the strangers' lock, as the unlock link is.
 */
async function mailboxFirst(limits: RouteLimits, email: string, intent: Intent): Promise<SignInOutcome> {
  const { gate, client } = limits;
  await limits.answeredMailboxFirst();
  const account = await mailableAccount(gate.sql, email, gate.config.email.requireVerification);
  const passed = {
    email,
    client,
    device: null,
    route: limits.path,
    userAgent: limits.userAgent,
    locale: limits.locale,
    sessionId: newSessionId(),
    intent,
  };
  return openPending(gate, passed, account, { step: "mailbox" });
}

type Solved = { due: LevelDue; terms: ChallengeTerms };

/**
 * The ALTCHA, as hard as this address's recent failures and the budget's pressure call for
 * (lib/captcha/difficulty.ts), unless the client is a known device of this very account.
 */
async function passAltcha(limits: RouteLimits, email: string, altcha: string | undefined, knownDevice: boolean) {
  const { gate, client } = limits;
  const due = levelDue({
    budgetPressure: gate.hashBudget.recentPressure(),
    addressFailures: gate.addressFailures.get(client.key) ?? 0,
    knownDevice,
  });
  const captcha = await verifyAltcha(altcha, gate.config.altcha, gate.replays, gate.clock(), due);
  if (!captcha.ok) return captchaRefused(limits, email, captcha);
  return { due, terms: captcha.terms } satisfies Solved;
}

function captchaRefused(limits: RouteLimits, email: string, captcha: Extract<CaptchaOutcome, { ok: false }>) {
  logSecurity(limits.gate, { route: limits.path, outcome: "captcha_invalid", client: limits.client, email, detail: captcha.reason });
  return { ok: false as const, refusal: captchaInvalid(captcha) };
}

// Long enough for a queued check and Argon2id; a request that dies frees the device after it.
const DEVICE_CLAIM_MS = 30_000;

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
 * A revoked or replaced device was no owner's lane: it pays the address's limit after all, and
 * its token owes the ALTCHA level it was let off (its solution is spent), so an old stolen cookie
 * cheapens no guess. (The challenge route sized its challenge as a stranger's: no live device.) A
 * live device the lane declines keeps its base size, as the challenge route gave it one: refused,
 * it could not sign in.
 */
async function goneDeviceOwes(limits: RouteLimits, email: string, solved: Solved | null): Promise<SignInOutcome | null> {
  const byAddress = await limits.deviceGone();
  if (byAddress) return refused(byAddress);
  if (solved && !meetsLevel({ ...solved.due, knownDevice: false }, solved.terms, limits.gate.clock())) {
    return captchaRefused(limits, email, { ok: false, reason: "too_easy" });
  }
  return null;
}

function subjectOf(gate: Gatehouse, email: string, device: KnownDevice | null): Subject {
  if (device) return { lane: "trusted", key: gate.deviceLockKey(device.id), policy: gate.config.devices.lockout, refuse: deviceLocked };
  return strangersOf(gate, gate.usernameKey(email));
}

/** The username's lock that every client with no known device shares. */
function strangersOf(gate: Gatehouse, usernameKey: string): Subject {
  return { lane: "untrusted", key: usernameKey, policy: gate.config.lockout, refuse: untrustedLocked };
}

/** The attempt's handle on its subject's lock; a known device's lifts the cap of its username's strangers' lock. */
function lockOf(gate: Gatehouse, email: string, subject: Subject, device: KnownDevice | null): LockoutAttempt {
  if (!device) return LockoutAttempt.strangers(gate.lockouts, subject);
  return LockoutAttempt.owner(gate.lockouts, subject, { key: gate.usernameKey(email), policy: gate.config.lockout });
}

/** The strangers' lock, before the hash budget: its refusal, or null (the count starts from the row it read). */
async function checkStrangers(limits: RouteLimits, email: string, subject: Subject, lock: LockoutAttempt): Promise<Response | null> {
  const { gate, client } = limits;
  const lockout = await lock.check(gate.clock());
  if (!lockout.locked) return null;
  logSecurity(gate, { route: limits.path, outcome: "locked", client, email, detail: subject.lane });
  return subject.refuse(lockout);
}

/**
 * The one function that runs Argon2id for a sign-in, private to this module: inside a hash-budget
 * slot of its lane it admits the attempt against its subject's lockout atomically (counting it
 * before the verification, so parallel guesses cannot all pass a check none has counted yet),
 * then verifies. A success issues a new device token in place of the old one. A right password
 * is then looked up in the breach corpus (markIfBreached).
 */
async function checkPassword(gate: Gatehouse, admission: Admission): Promise<SignInOutcome> {
  let outcome: SignInOutcome | undefined;
  try {
    outcome = await checkAdmitted(gate, admission);
  } catch (error) {
    gate.log.error({ event: "password_check_failed", err: messageOf(error) });
    gate.dataHealth.failed(error);
    logSecurity(gate, { route: admission.route, outcome: "unavailable", client: admission.client, email: admission.email });
    outcome = { ok: false, refusal: unavailable() };
  }
  // Whatever happened short of a success (which replaced the device), the device is free again.
  if (outcome.ok !== true && admission.device)
    await gate.devices.release(admission.device.id, admission.device.claimedUntilMs).catch(() => {});
  return outcome;
}

async function checkAdmitted(gate: Gatehouse, admission: Admission): Promise<SignInOutcome> {
  const { password, device, confirms, intent } = admission;
  // A sign-in from a client with no known device may wait for a mailed code (below), and a
  // password in a breach corpus makes it wait whether it is right or wrong.
  const confirmable = intent.kind === "sign_in" && device === null && confirms === null && gate.config.devices.confirmation !== "off";
  const checked = await verifyInSlot(gate, admission, confirmable);
  // The slot is Argon2id's alone: what a counted, verified attempt leads to (the breach verdict
  // awaited, the database writes) runs once the slot is free, so a slow range service holds none.
  const outcome: SignInOutcome = "refusal" in checked ? { ok: false, refusal: checked.refusal } : await decide(gate, admission, checked);
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
type Checked = { refusal: Response } | { attempt: Admitted; user: VerifiedAttempt; verdict: Verdict };

/** Counted on the subject's lock, then Argon2id, inside a slot of the hash budget (or `busy` when none is free). */
function verifyInSlot(gate: Gatehouse, admission: Admission, confirmable: boolean): Promise<Checked> {
  const { email, password, client, route, subject } = admission;
  return gate.hashBudget.run(
    async (): Promise<Checked> => {
      // A wrong password this client already sent in the streak is admitted uncounted; it is
      // still verified (Argon2id, so its time tells nothing) and answered as any wrong password.
      const attempt = await admission.lock.admit(gate.clock(), fingerprintOf(gate, admission));
      if (!attempt.allowed) {
        logSecurity(gate, { route, outcome: "locked", client, email, detail: subject.lane });
        return { refusal: subject.refuse(attempt.check) };
      }
      // The breach lookup starts only once the attempt is admitted (a refused one spends no range
      // request) and runs beside Argon2id, so its answer is rarely waited for (it fails open after
      // its timeout).
      const verdict = confirmable ? gate.breachedPasswords.check(password).catch(() => "unknown" as const) : null;
      const endTimer = gate.metrics.passwordCheckSeconds.startTimer();
      const user = await verifyCredentials(gate.sql, { email, password }, gate.hasher, (error) =>
        gate.log.warn({ event: "password_rehash_failed", err: messageOf(error) }),
      );
      endTimer();
      return { attempt, user, verdict };
    },
    (): Checked => {
      logSecurity(gate, { route, outcome: "busy", client, email, detail: subject.lane });
      return { refusal: busy() };
    },
    subject.lane,
  );
}

/**
 * The attempt's password as its subject's lock remembers a wrong one: keyed, truncated, and scoped
 * to the client that sent it (a stranger's address; a known device's own lock), so a repeat from
 * elsewhere is counted and tells nobody what this client sent (docs/decisions/0019).
 */
function fingerprintOf(gate: Gatehouse, admission: Admission): string {
  const { subject } = admission;
  const clientKey = subject.lane === "trusted" ? subject.key : admission.client.key;
  const scope = { usernameKey: gate.usernameKey(admission.email), clientKey };
  return wrongPasswordFingerprint(gate.config.passwords.wrongPasswordSecret, scope, admission.password);
}

/**
 * What a counted, verified password attempt leads to, one named outcome each: failed (or its
 * stand-in), confirm the device, the second step, or signed in.
 */
async function decide(gate: Gatehouse, admission: Admission, { attempt, user, verdict }: Extract<Checked, { attempt: Admitted }>) {
  const { confirms, intent } = admission;
  // A sign-in from a client with no known device, on a username under attack (or always), waits
  // for a mailed code whether the password is right or not (lib/factors/device-confirmation.ts).
  const confirmable = verdict !== null;
  const underAttack = confirmable && confirmationDueBeforeCheck(gate.config.devices.confirmation, attempt.lastFailedAtMs, gate.clock());
  // So does a password in a breach corpus, wrong as well as right, so the answer does not tell
  // them apart. Under attack the code is due anyway, and a right password's mark is found in the background.
  const submittedBreached = confirmable && !underAttack && (await verdict) === "breached";
  const standsIn = underAttack || submittedBreached;

  // An account whose address is not confirmed yet fails exactly like a wrong password, even
  // for the right one, unless this attempt carries the address's confirmation link: any other
  // answer would tell whoever just registered an address that it had no account.
  const confirming = confirms !== null && user !== null && user.id === confirms.userId;
  const unconfirmed = user !== null && !user.emailVerified && !confirming && gate.config.email.requireVerification;
  if (!user || unconfirmed || (confirms !== null && !confirming)) return failed(gate, admission, attempt, user, { unconfirmed, standsIn });
  if (confirming && !(await confirmedByLink(gate, admission, confirms, user))) return { ok: false as const, refusal: invalidLink() };
  if (user.rehashed) gate.log.info({ event: "password_rehashed", userId: user.id });
  if (intent.kind === "change_password") return signedIn(gate, admission, user);

  // Only a right password is marked as breached. Where the answer does not wait for the verdict,
  // it is found in the background, so a right password answers as soon as a wrong one.
  const breached = user.passwordBreached || submittedBreached;
  const markInBackground = () =>
    gate.background.run("breach_check", async () => void (await markIfBreached(gate, admission, user, admission.password)));
  if (submittedBreached) await recordBreach(gate, admission, user);
  else if (underAttack) markInBackground();
  // A mark from an earlier sign-in holds too: a right password found breached before is never a
  // session from a new device without the code.
  if (confirmable && (standsIn || breached)) return confirmDevice(gate, admission, attempt, user);
  if (user.factors.due) {
    const remembered = await rememberedUntil(gate, admission);
    if (remembered !== null) return signedInRemembered(gate, admission, { ...user, passwordBreached: breached }, remembered);
    markInBackground();
    return secondStep(gate, admission, attempt, user);
  }
  return signedIn(gate, admission, { ...user, passwordBreached: breached });
}

/**
 * A wrong password, an unknown account, or a right one whose address is not confirmed: counted
 * (admitAttempt already did, whether or not the account exists) and recorded; under attack, or
 * for a password in a breach corpus, answered by a stand-in as a right one would be.
 */
async function failed(
  gate: Gatehouse,
  admission: Admission,
  attempt: Admitted,
  user: VerifiedAttempt,
  { unconfirmed, standsIn }: { unconfirmed: boolean; standsIn: boolean },
): Promise<SignInOutcome> {
  const { email, client, device, route, subject } = admission;
  // Its owner gets the link again (within the recovery-mail quota).
  if (user && unconfirmed) await gate.recovery.verificationNeeded(user);
  await countedWithoutSession(gate, admission, subject, attempt, "failure", gate.clock(), fingerprintOf(gate, admission));
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
  const browser = browserLabel(admission.userAgent);
  const record = () =>
    gate.events.signInFailed(email, client, attempt.state, capped && !device, { browser }, unconfirmed ? "unconfirmed" : "wrong");
  // A stand-in's record waits for nobody, as a right password's "device_confirmation_due" does:
  // the answer then costs the same awaited work whether the password was right or wrong.
  if (standsIn) gate.background.run("sign_in_failed", record);
  else await record();
  // A device that keeps failing is more likely stolen than mistyped on: at the cap it is revoked.
  if (device && capped) await gate.devices.forget(device.id);
  return standsIn ? standIn(gate, admission) : { ok: false, refusal: null };
}

/** A wrong password answered as a right one waiting for its mailed code: a pending sign-in with no user and no code. */
function standIn(gate: Gatehouse, admission: Admission): Promise<SignInOutcome> {
  return openPending(gate, admission, null, { step: "device_confirmation" });
}

/**
 * The address-confirmation link, spent only by its right password, once: of two racing
 * confirmations one wins. Proof of the mailbox: what marked the username under attack (a
 * stranger, or the owner's own sign-in before confirming, marked as a wrong password is so the
 * next answer tells nothing) makes the owner's new devices wait for no code now (invariant 11).
 */
async function confirmedByLink(
  gate: Gatehouse,
  admission: Admission,
  confirms: { linkId: string },
  user: NonNullable<VerifiedAttempt>,
): Promise<boolean> {
  const nowMs = gate.clock();
  if (!(await gate.emailTokens.use(confirms.linkId, nowMs))) return false;
  await gate.lockouts.clearUnderAttack(gate.usernameKey(admission.email));
  if (await confirmAddress(gate.prisma, user.id, nowMs)) {
    await gate.events.accountChanged(user.id, "email_verified", admission.client, { browser: browserLabel(admission.userAgent) });
    gate.log.info({ event: "email_verified", userId: user.id });
  }
  return true;
}

/**
 * A right password from a new device that must wait for a mailed code (under attack, or found
 * breached). Counted as the stand-in for a wrong password is (the lock, the address's failures,
 * the mark "under attack"), and recorded in the background, so that nothing after it tells them
 * apart. An account with a second factor waits for the code too, and is asked its factor after it
 * (lib/auth/second-step.ts): answering it mfa_required here would tell a right password from the
 * wrong ones that this step answers alike.
 */
async function confirmDevice(gate: Gatehouse, admission: Admission, attempt: Admitted, user: NonNullable<VerifiedAttempt>) {
  const { subject, client } = admission;
  await countedWithoutSession(gate, admission, subject, attempt, "failure", gate.clock(), fingerprintOf(gate, admission));
  const browser = browserLabel(admission.userAgent);
  gate.background.run("device_confirmation_due", () => gate.events.accountChanged(user.id, "device_confirmation_due", client, { browser }));
  return openPending(gate, admission, user, { step: "device_confirmation" });
}

/**
 * The second step, where the account has one: no session, no token, no device token and no
 * lockout reset yet (they come with the step); only a pending sign-in, bound to this client.
 * (Read with the password hash, before Argon2id: the same statements for a right password and a
 * wrong one.) This right password stays counted on the lock until its step is passed; the owner
 * sees it in the events and, when it is the one that locks strangers out, by mail, as a wrong
 * password would tell them: someone may hold the password.
 */
async function secondStep(gate: Gatehouse, admission: Admission, attempt: Admitted, user: NonNullable<VerifiedAttempt>) {
  const browser = browserLabel(admission.userAgent);
  await gate.events.accountChanged(user.id, "second_step_due", admission.client, { browser });
  await countedWithoutSession(gate, admission, admission.subject, attempt, "second_step", gate.clock());
  return openPending(gate, admission, user, { step: "second_factor", methods: secondStepMethods(user.factors) });
}

/**
 * Until when this browser's "Remember this browser" grant lets a right password skip the second
 * step (docs/decisions/0033), or null: only a browser sign-in, only from the claimed known device
 * whose own row stores the digest of the secret sent, never while the username is under attack
 * (a stranger's failure in the last 24 hours: the grant waits, it is not spent).
 */
async function rememberedUntil(gate: Gatehouse, admission: Admission): Promise<number | null> {
  const { device, remembers, intent } = admission;
  if (gate.config.devices.rememberMs === 0 || !device || remembers === null) return null;
  if (intent.kind !== "sign_in" || intent.channel !== "browser") return null;
  const nowMs = gate.clock();
  const usernameKey = gate.usernameKey(admission.email);
  const untilMs = await gate.devices.remembered(device.id, usernameKey, remembers, nowMs);
  if (untilMs === null) return null;
  const strangers = await gate.lockouts.check(usernameKey, nowMs, gate.config.lockout);
  const lastFailedAtMs = strangers.seen.row?.lastFailedAtMs ?? null;
  if (lastFailedAtMs !== null && nowMs - lastFailedAtMs < AT_RISK_WINDOW_MS) {
    gate.log.info({ event: "second_step_remember_suspended", reason: "under_attack" });
    return null;
  }
  return untilMs;
}

/**
 * A right password on a remembered browser: signed in without the second step, recorded as such
 * (the owner's events count each skip), and the grant's secret rotated with the device row, so a
 * copy of the old cookies is dead from now on.
 */
async function signedInRemembered(gate: Gatehouse, admission: Admission, user: NonNullable<VerifiedAttempt>, untilMs: number) {
  const finished = await completeSignIn(gate, admission, user, "remembered", admission.lock, newRemember(untilMs));
  if (finished.ok) {
    const browser = browserLabel(admission.userAgent);
    await gate.events.accountChanged(user.id, "second_step_remembered", admission.client, { browser, sessionId: admission.sessionId });
  }
  return finished;
}

/** A right password with nothing left to prove: the sign-in finished as every way in finishes it. */
function signedIn(gate: Gatehouse, admission: Admission, user: NonNullable<VerifiedAttempt>) {
  return completeSignIn(gate, admission, user, "password", admission.lock);
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
    void gate.recovery.notice("password_breached", { id: user.id }, noticeOrigin(gate, from));
    gate.log.info({ event: "password_found_breached", userId: user.id });
  }
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
  from: { client: ClientAddress; device: KnownDevice | null; userAgent: string | null; email: string | null },
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
    await gate.recovery.lockedOut(from.email, noticeOrigin(gate, from));
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
  from: { client: ClientAddress; userAgent: string | null },
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

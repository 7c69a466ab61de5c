import type { Gatehouse } from "@/lib/app";
import { browserSessionFields, writeSignIn } from "@/lib/auth/browser-session";
import { logSecurity } from "@/lib/auth/security-log";
import type { KnownDevice } from "@/lib/devices/known-devices";
import type { NewRemember } from "@/lib/devices/remember";
import { truncateAddress } from "@/lib/events/security-events";
import { deviceCodeDigest, deviceCodeSeedTag, deviceCodeWindow, sealAddress, windowDeviceCode } from "@/lib/factors/device-confirmation";
import { deviceCodeSeedOf } from "@/lib/factors/device-code-seeds";
import type { SecondStepMethod } from "@/lib/factors/store";
import type { Intent, SignInOutcome } from "@/lib/auth/sign-in-outcome";
import type { ClientAddress } from "@/lib/http/client-address";
import { LockoutAttempt, liftsStrangersCap, type LockClearing } from "@/lib/lockout/attempt";
import { messageOf } from "@/lib/log/message";
import type { NoticeOrigin } from "@/lib/recovery/mails";
import { browserLabel, PASSKEY_SUFFIX } from "@/lib/sessions/browser-label";
import { recordSignIn, signInToRecord } from "@/lib/users/accounts";

/**
 * Who is signing in, from where: the client, its known device (the one a success replaces), the
 * session id chosen for the sign-in (the "signed in" event names it), and the intent. A pending
 * sign-in keeps these for its next step.
 */
export type PassedPassword = {
  email: string;
  client: ClientAddress;
  device: KnownDevice | null;
  route: string;
  /** Only labels (the account page's list of sessions). */
  userAgent: string | null;
  /** The language the request stated; null when it stated none. */
  locale: string | null;
  sessionId: string;
  intent: Intent;
};

/**
 * How the sign-in proved its owner: the password alone, its second step, the mailed code, a
 * passkey, or the password on a remembered browser (its second step skipped).
 */
export type Via = "password" | "second_step" | "device_confirmation" | "passkey" | "remembered";

type Finishing = {
  id: string;
  email: string;
  credentialGeneration: number;
  passwordBreached: boolean;
  signedInBefore?: boolean;
  lastLocale?: string | null;
};

/**
 * What every way in does at its end (a password, its second step, the mailed code, a passkey; an
 * emailed link's confirmation is a password's): the writes (a new device token in place of the
 * old one, the sign-in event, a browser's session) in one statement, the record of it (the
 * first-sign-in mark, the new-device notice; for "Confirm it's you" a reauthentication event; for
 * a password change nothing, which the route records), then the locks its success clears.
 * `lock`: what clears them, as the attempt that counted read them; by default the username's
 * lock from a new device, NIST's cap on it from a known one. `remember`: a "Remember this browser"
 * grant for the new device row (docs/decisions/0033); without one, the replaced row's carries over.
 */
export async function completeSignIn(
  gate: Gatehouse,
  passed: PassedPassword,
  user: Finishing,
  via: Via,
  lock: LockClearing = clearingOf(gate, passed),
  remember?: NewRemember,
): Promise<Extract<SignInOutcome, { ok: true }> | { ok: false; refusal: Response | null }> {
  const { device, intent } = passed;
  const nowMs = gate.clock();
  // The label and network the account page's "Known devices" shows for it.
  const origin = { label: browserLabel(passed.userAgent), address: truncateAddress(passed.client.address) };
  const issuing = gate.devices.issuing(gate.usernameKey(passed.email), nowMs, device?.id, origin, remember?.grant);
  const written =
    intent.kind === "sign_in"
      ? await writeNewSignIn(gate, passed, user, via, issuing, nowMs)
      : await writeProof(gate, passed, user, issuing.writes);
  if (!written.ok) return written;
  // The locks this success clears, once it is written (a sign-in that was not clears none). The
  // sign-in stands if this fails: a lock left on refuses strangers, and the owner is in.
  await lock
    .clearAfterSuccess(nowMs)
    .catch((error: unknown) => gate.log.error({ event: "lockout_reset_failed", userId: user.id, err: messageOf(error) }));
  logSucceeded(gate, passed, user, via);
  return {
    ok: true,
    user: { id: user.id, email: user.email, credentialGeneration: user.credentialGeneration },
    device: { token: issuing.device.token, expiresAtMs: issuing.device.expiresAtMs },
    sessionId: passed.sessionId,
    sessionOpen: intent.kind === "sign_in" && intent.channel === "browser",
    passwordChangeRequired: user.passwordBreached,
    ...(remember ? { remember: { secret: remember.secret, untilMs: remember.grant.untilMs } } : {}),
  };
}

function clearingOf(gate: Gatehouse, passed: PassedPassword): LockClearing {
  const strangers = { key: gate.usernameKey(passed.email), policy: gate.config.lockout };
  return passed.device ? liftsStrangersCap(gate.lockouts, strangers) : LockoutAttempt.strangers(gate.lockouts, strangers);
}

type Written = { ok: true } | { ok: false; refusal: Response | null };

/**
 * A sign-in's writes: a browser's session is written with its device and its event, one
 * statement (lib/db/one-statement.ts), so one round trip, and all three or none; then the
 * first-sign-in mark and, for a new device of an account that has signed in before, the notice.
 */
async function writeNewSignIn(
  gate: Gatehouse,
  passed: PassedPassword,
  user: Finishing,
  via: Via,
  issuing: { writes: Parameters<typeof writeSignIn>[2]; device: { id: string } },
  nowMs: number,
): Promise<Written> {
  const { client, device, intent } = passed;
  const deviceWrites = issuing.writes;
  const issuedDeviceId = issuing.device.id;
  const browser = browserLabel(passed.userAgent);
  const written = await writeSignIn(
    gate,
    user,
    deviceWrites,
    gate.events.signInSucceededWrites(user.id, client, {
      browser: via === "passkey" ? `${browser}${PASSKEY_SUFFIX}` : browser,
      sessionId: passed.sessionId,
    }),
    ...(intent.kind === "sign_in" && intent.channel === "browser"
      ? [gate.sessions.creating(browserSessionFields(gate, user, client, passed.userAgent, passed.sessionId, nowMs)).writes]
      : []),
  );
  if (!written.ok) return written;
  // The owner's mails follow the language of a sign-in that proved more than a password typed on
  // a new device (a known device, the second step, the mailed code, a passkey): whoever holds only
  // the password cannot make the owner's "new sign-in" warning, and later mails, unreadable to them.
  const locale = device || via !== "password" ? passed.locale : null;
  // After the writes: a sign-in that could not be written is not the account's first.
  const first = signInToRecord(user, locale) ? await recordSignIn(gate.prisma, user.id, nowMs, locale) : false;
  // A new device of an account that has signed in before: its first device is no news.
  // Its mail carries "This wasn't me", which ends this session (or the app's token family) and forgets its device.
  if (!device && !first)
    gate.recovery.newDeviceSignIn(user, noticeOrigin(gate, passed), {
      sessionId: passed.sessionId,
      deviceId: issuedDeviceId,
      lifetimeMs:
        intent.kind === "sign_in" && intent.channel === "browser"
          ? gate.config.session.policy.absoluteMs
          : gate.config.tokens.refreshFamilyLifetimeMs,
    });
  return written;
}

/** "Confirm it's you" and a password change: a new device token, and for the first, its event (no sign-in happened). */
async function writeProof(
  gate: Gatehouse,
  passed: PassedPassword,
  user: Finishing,
  deviceWrites: Parameters<typeof writeSignIn>[2],
): Promise<Written> {
  const written = await writeSignIn(gate, user, deviceWrites);
  if (!written.ok || passed.intent.kind !== "reauthenticate") return written;
  const browser = browserLabel(passed.userAgent);
  await gate.events.accountChanged(user.id, "reauthenticated", passed.client, { browser, sessionId: passed.intent.sessionId });
  return written;
}

function logSucceeded(gate: Gatehouse, passed: PassedPassword, user: Finishing, via: Via): void {
  const { route, client, email } = passed;
  if (via === "passkey") {
    gate.log.info({ event: "passkey_sign_in_succeeded", userId: user.id });
    logSecurity(gate, { route, outcome: "sign_in_succeeded", client, email: user.email, detail: "passkey", userId: user.id });
    return;
  }
  const lane = passed.device ? "trusted" : "untrusted";
  gate.log.info({ event: "sign_in_succeeded", lane, userId: user.id, via });
  logSecurity(gate, { route, outcome: "sign_in_succeeded", client, email, detail: lane, userId: user.id });
}

/**
 * The pending sign-in a right password (or, for a device confirmation, any password) leaves: the
 * second factor's, a device confirmation whose code is mailed to the owner, or the mailbox proved
 * first (no password checked yet). A stand-in (no user) is stored and counted like a real one, and
 * has no code.
 */
export async function openPending(
  gate: Gatehouse,
  passed: PassedPassword,
  user: { id: string; email: string; credentialGeneration: number } | null,
  next: { step: "second_factor"; methods: SecondStepMethod[] } | { step: "device_confirmation" | "mailbox" },
): Promise<Extract<SignInOutcome, { ok: "second_step" }>> {
  const nowMs = gate.clock();
  const mailed = next.step !== "second_factor";
  const secret = gate.config.devices.codeSecret;
  // The window's code under the account's seed, read and made for a stand-in too (for nobody), so
  // both do the same work.
  const window = deviceCodeWindow(nowMs);
  const seed = mailed ? await deviceCodeSeedOf(gate.prisma, user?.id ?? NOBODY) : null;
  const windowCode = windowDeviceCode(secret, user?.id ?? NOBODY, seed ?? NOBODY, window);
  const code = mailed && user && seed !== null ? windowCode : null;
  const pending = await storePending(gate, passed, user, next, code, nowMs);
  const methods: SecondStepMethod[] = next.step === "second_factor" ? next.methods : ["email_code"];
  // A stand-in's promise too, for nobody (it sends nothing): the answer waits for the same write
  // whether the password was right, or the address has an account, or not.
  if (mailed) {
    const seedTag = deviceCodeSeedTag(secret, seed ?? NOBODY);
    await gate.recovery.deviceCode(
      user ?? { id: NOBODY },
      { window, seedTag, validUntilMs: pending.expiresAtMs },
      noticeOrigin(gate, passed),
    );
  }
  const event = next.step === "second_factor" ? "second_step_due" : "device_confirmation_due";
  gate.log.info({
    event,
    methods,
    ...(next.step === "mailbox" ? { mailboxFirst: true } : {}),
    ...(user ? { userId: user.id } : { standIn: true }),
  });
  logSecurity(gate, {
    route: passed.route,
    outcome: event,
    client: passed.client,
    email: passed.email,
    ...(next.step === "mailbox" ? { detail: "mailbox_first" } : {}),
    ...(user ? { userId: user.id } : {}),
  });
  return {
    ok: "second_step",
    pending: { ...pending, step: next.step, methods },
    user: user ? { id: user.id, credentialGeneration: user.credentialGeneration } : null,
  };
}

/** The pending row: bound to this client's session id, purpose and channel; a mailed code's with its code's digest. */
function storePending(
  gate: Gatehouse,
  passed: PassedPassword,
  user: { id: string; credentialGeneration: number } | null,
  next: { step: "second_factor" } | { step: "device_confirmation" | "mailbox" },
  code: string | null,
  nowMs: number,
) {
  const { intent } = passed;
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
    nowMs,
  };
  if (next.step === "second_factor") return gate.pendingSignIns.open({ ...common, step: "second_factor", userId: user!.id });
  return gate.pendingSignIns.open({
    ...common,
    step: next.step,
    userId: user?.id ?? null,
    codeDigest: code === null ? null : deviceCodeDigest(gate.config.devices.codeSecret, code),
    usernameKey,
    sealedEmail: sealAddress(gate.config.devices.codeSecret, usernameKey, passed.email),
  });
}

/** The nil UUID: whom a stand-in's reads and mail promises are for, which no account is. */
export const NOBODY = "00000000-0000-0000-0000-000000000000";

/** Where a sign-in came from, as an email to the owner tells it (the account page's words). */
export function noticeOrigin(gate: Gatehouse, from: { client: { address: string }; userAgent: string | null }): NoticeOrigin {
  return { browser: browserLabel(from.userAgent), address: truncateAddress(from.client.address), atMs: gate.clock() };
}
